//! The generated files checked into the repository (the C and JNI entry
//! points, `NativeBridge.java`, every language's result shapes) must be
//! exactly what the generator writes from the current declarations of
//! `bridge/src/api`. Set `CURSUS_UPDATE_GENERATED=1` to rewrite them
//! (`make bridge-gen`).

use std::path::Path;

#[test]
fn checked_in_generated_files_are_up_to_date() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let api = cursus_bridge_gen::read_api(&root.join("bridge/src/api")).unwrap();
    if std::env::var_os("CURSUS_UPDATE_GENERATED").is_some() {
        cursus_bridge_gen::outputs::write(&api, &root).expect("write the generated files");
        return;
    }
    let stale = cursus_bridge_gen::outputs::stale(&api, &root);
    assert!(
        stale.is_empty(),
        "generated files are stale: {stale:?}; regenerate them with `make bridge-gen` \
         (CURSUS_UPDATE_GENERATED=1 cargo test -p cursus-bridge-gen --test generated)"
    );
}
