use tiny_shapes::{area::circle_area, shapes::circle::Circle};

#[test]
fn unit_circle() {
    assert!((circle_area(&Circle { r: 1.0 }) - std::f64::consts::PI).abs() < 1e-9);
}
