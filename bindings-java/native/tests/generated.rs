//! The checked-in `NativeBridge.java` must be exactly what the generator
//! writes from the current bridge declarations. Set
//! `CURSUS_UPDATE_GENERATED=1` to rewrite it (`make java-bridge`).

#[test]
fn checked_in_native_bridge_is_up_to_date() {
    let generated = include_str!(concat!(env!("OUT_DIR"), "/NativeBridge.java"));
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../src/main/java/io/cursus/NativeBridge.java"
    );
    if std::env::var_os("CURSUS_UPDATE_GENERATED").is_some() {
        std::fs::write(path, generated).expect("write NativeBridge.java");
        return;
    }
    let checked_in = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "bindings-java/src/main/java/io/cursus/NativeBridge.java is stale: regenerate it with \
         `make java-bridge` (CURSUS_UPDATE_GENERATED=1 cargo test -p cursus-jni --test generated)"
    );
}
