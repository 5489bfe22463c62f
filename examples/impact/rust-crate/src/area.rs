use crate::shapes::circle::Circle;
use crate::util::square;

pub fn circle_area(c: &Circle) -> f64 {
    std::f64::consts::PI * square(c.r)
}
