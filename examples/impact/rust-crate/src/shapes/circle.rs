pub struct Circle {
    pub r: f64,
}
