pub fn square(x: f64) -> f64 {
    x * x
}
