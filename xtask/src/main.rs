//! Project automation, run as `cargo xtask <command>`.

fn main() {
    eprintln!("xtask: no commands yet");
    std::process::exit(2);
}
