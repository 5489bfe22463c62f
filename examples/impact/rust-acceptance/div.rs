use rcalc::ops::div;

#[test]
fn div_exact() {
    assert_eq!(div(7.0, 2.0), Some(3.5));
}

#[test]
fn div_by_zero() {
    assert_eq!(div(1.0, 0.0), None);
}
