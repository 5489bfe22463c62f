use rcalc::fmt::total_eur;

#[test]
fn total_in_eur() {
    assert_eq!(total_eur(&[1, 2, 3]), "total: 6 EUR");
}
