//! The broker binary arrives with the server (in progress).
fn main() {
    eprintln!("cursus-broker: the server is not built yet");
    std::process::exit(1);
}
