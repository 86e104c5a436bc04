mod common;
use common::tui::Bench;
#[test]
fn shot() {
    let mut b = Bench::open("llm-chat-clients");
    b.chars("3");
    println!("{}", b.screen(120, 35));
    println!("{}", b.screen(80, 24));
}
