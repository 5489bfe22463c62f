use tiny_shapes::shapes::rect::Rect;

#[test]
fn rect() {
    assert_eq!(Rect { w: 1.0, h: 1.0 }.area(), 1.0);
}
