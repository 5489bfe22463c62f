use rcalc::ops::neg;

#[test]
fn neg_small() {
    assert_eq!(neg(2), -2);
}
