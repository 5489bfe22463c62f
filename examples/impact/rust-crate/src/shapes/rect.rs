pub struct Rect {
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn area(&self) -> f64 {
        self.w * self.h
    }
}

#[cfg(test)]
mod tests {
    use super::Rect;

    #[test]
    fn area() {
        assert_eq!(Rect { w: 2.0, h: 3.0 }.area(), 6.0);
    }
}
