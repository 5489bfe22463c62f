pub mod circle;
pub mod rect;
