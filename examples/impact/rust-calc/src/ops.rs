pub fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::add;

    #[test]
    fn add_small() {
        assert_eq!(add(2, 3), 5);
    }
}
