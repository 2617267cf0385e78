//! `cursus-test-pki <dir>`: writes a test PKI (see `cursus_testkit::pki`)
//! into `<dir>` for tests in other languages, which have no rcgen. Prints
//! the directory. Test use only: the keys are fresh and unprotected.

fn main() {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: cursus-test-pki <dir>");
        std::process::exit(2);
    };
    match cursus_testkit::pki::TestPki::generate(std::path::Path::new(&dir)) {
        Ok(_) => println!("{}", std::path::Path::new(&dir).display()),
        Err(e) => {
            eprintln!(
                "cursus-test-pki: cannot write {}: {e}",
                dir.to_string_lossy()
            );
            std::process::exit(1);
        }
    }
}
