use rcalc::ops::mul;

#[test]
fn mul_small() {
    assert_eq!(mul(2, 3), 6);
}
