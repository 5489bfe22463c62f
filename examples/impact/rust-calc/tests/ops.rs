use rcalc::ops::add;

#[test]
fn adds() {
    assert_eq!(add(1, 1), 2);
}
