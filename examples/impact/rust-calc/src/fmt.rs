pub fn total(items: &[i64]) -> String {
    let result: i64 = items.iter().sum();
    format!("total: {}", result)
}
