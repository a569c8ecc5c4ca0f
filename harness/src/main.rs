mod store_cmd;
fn main() {}
