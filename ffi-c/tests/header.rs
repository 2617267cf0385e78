//! The checked-in `include/cursus.h` must be exactly what cbindgen generates
//! from the current sources. Set `CURSUS_UPDATE_HEADER=1` to rewrite it.

#[test]
fn checked_in_header_is_up_to_date() {
    let generated = include_str!(concat!(env!("OUT_DIR"), "/cursus.h"));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../include/cursus.h");
    if std::env::var_os("CURSUS_UPDATE_HEADER").is_some() {
        std::fs::write(path, generated).expect("write include/cursus.h");
        return;
    }
    let checked_in = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "include/cursus.h is stale: regenerate it with `make ffi-header` \
         (CURSUS_UPDATE_HEADER=1 cargo test -p cursus-ffi --test header)"
    );
}
