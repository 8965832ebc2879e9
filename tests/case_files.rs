//! Strict case files (issue "Trustworthy runs"): an unknown or misspelled key is an error
//! naming it, in every table of the configuration; a configuration survives a TOML round
//! trip unchanged.

use ramus::{Error, ForestConfig};

const BASE: &str = r#"
cells = [64, 64, 1]
boundaries = [{ kind = "wall", velocity = [0, 0, 0] }, { kind = "wall", velocity = [0, 0, 0] },
              { kind = "wall", velocity = [0, 0, 0] }, { kind = "wall", velocity = [0.1, 0, 0] },
              { kind = "periodic" }, { kind = "periodic" }]
fluid = { kind = "reynolds", re = 1000, velocity = 0.1, length = 64 }
"#;

fn error_for(text: &str) -> String {
    match ForestConfig::from_toml(text) {
        Err(e @ Error::InvalidParameter { .. }) => e.to_string(),
        Err(e) => panic!("expected a named configuration error, got {e}"),
        Ok(c) => panic!("accepted: {c:?}"),
    }
}

#[test]
fn misspelled_keys_are_errors_that_name_them() {
    // The issue's reproduction: `levles = 3` silently gave one level.
    let e = error_for(&format!("{BASE}[refinement]\nlevles = 3\n"));
    assert!(e.contains("levles"), "{e}");
    // `obstacle = [...]` (for `obstacles`) silently dropped the obstacle.
    let e = error_for(&format!(
        "obstacle = [{{ shape = {{ kind = \"sphere\", center = [32, 32, 0], radius = 4 }} }}]\n{BASE}"
    ));
    assert!(e.contains("obstacle"), "{e}");
    let e = error_for(&format!("celss = [64, 64, 1]\n{BASE}"));
    assert!(e.contains("celss"), "{e}");
    // A misspelled key inside a table (not at the top).
    for (toml_tail, key) in [
        ("[guard]\nevry = 10\n", "evry"),
        ("[refinement]\ncriterion = { kind = \"vorticity\", n_start = -3, n_inc = 1, lenght = 64 }\n", "lenght"),
        ("[refinement]\nwalls = { faces = [\"x_min\"], distance = 8, obstacle = true }\n", "obstacle"),
        ("[refinement]\ncapacity = { kind = \"blocks\", block = 100 }\n", "block"),
    ] {
        let e = error_for(&format!("{BASE}{toml_tail}"));
        assert!(e.contains(key), "{key}: {e}");
    }
}

#[test]
fn a_configuration_round_trips_through_toml() {
    let text =
        format!("{BASE}[refinement]\nlevels = 3\ncriterion = {{ kind = \"vorticity\", n_start = -3, n_inc = 1 }}\n");
    let config = ForestConfig::from_toml(&text).expect("valid");
    let written = config.to_toml().expect("serialisable");
    assert_eq!(ForestConfig::from_toml(&written).expect("reads back"), config, "{written}");
}
