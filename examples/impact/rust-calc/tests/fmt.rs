use rcalc::fmt::total;

#[test]
fn total_format() {
    assert_eq!(total(&[1, 2, 3]), "total: 6");
}
