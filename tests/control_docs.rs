//! The user guide's parameter table and the controls the plugin exposes say the same thing
//! (issue 19): every control has a row, with its ID, its name and, word for word, the
//! sentence the editor shows as its tooltip (`controls::DESCRIPTIONS`); no row names a
//! control that does not exist. Editing either alone fails here.

use rosin_engine::controls;

/// The rows of the parameter table in `docs/user-guide.md`: (ID, name, what it does).
fn table_rows() -> Vec<(String, String, String)> {
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/user-guide.md")).expect("the user guide");
    let table = guide.split("### Parameters").nth(1).expect("a Parameters section");
    table
        .lines()
        .skip_while(|l| !l.starts_with("| ID |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|line| {
            let cells: Vec<&str> = line.trim().trim_matches('|').split('|').map(str::trim).collect();
            (cells[0].trim_matches('`').to_string(), cells[1].to_string(), cells[cells.len() - 1].to_string())
        })
        .collect()
}

#[test]
fn every_control_has_its_row_and_its_tooltip_is_the_row_s_words() {
    let rows = table_rows();
    assert!(rows.len() >= controls::ALL.len(), "{} rows for {} controls", rows.len(), controls::ALL.len());
    for spec in controls::ALL {
        let row = rows.iter().find(|(id, _, _)| id == spec.id).unwrap_or_else(|| panic!("no row for `{}` in the user guide", spec.id));
        assert_eq!(row.1, spec.name, "`{}`: the guide and the plugin name it differently", spec.id);
        assert!(!spec.description().is_empty(), "`{}` has no description", spec.id);
        assert_eq!(row.2, spec.description(), "`{}`: the guide's row and the tooltip differ", spec.id);
    }
    for (id, _, _) in &rows {
        assert!(controls::find(id).is_some(), "the guide has a row for `{id}`, which is no control");
    }
    assert_eq!(controls::DESCRIPTIONS.len(), controls::ALL.len(), "a description for a control that does not exist");
}
