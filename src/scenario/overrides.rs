//! Overrides: `key=value` settings applied to a scenario file's TOML document before it
//! is parsed, so any key of the schema can be set from the command line
//! (`lockstorm scenario --set`, `lockstorm sweep --set/--vary`) and the file's own
//! strict parsing and validation judge the result.
//!
//! A key is a dotted path through the document: `algorithm.drift_factor`,
//! `clients.hold.max` (a key of an inline table), `faults.0.duration` or
//! `faults[0].duration` (an entry of an array, counted from 0), `faults.*.rate` (every
//! entry). Missing tables are created; missing array entries are an error. A value is
//! a TOML value (`0.02`, `true`, `"text"`, `[0, 1]`, `{ min = "1ms", max = "5ms" }`); a
//! word that is not one (`250ms`, `parallel`) is taken as a string. The document keeps
//! its layout, so an error in an overridden value points at the file's own line.

use std::fmt;
use toml_edit::{DocumentMut, InlineTable, Item, TableLike, Value};

/// One step of a key path.
#[derive(Clone, Debug, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
    /// Every entry of an array.
    All,
}

/// One `key=value` setting.
#[derive(Clone, Debug)]
pub struct Override {
    /// The key as the user wrote it, for messages and rerun commands.
    pub key: String,
    path: Vec<Seg>,
    pub value: Value,
}

impl Override {
    /// Parses `key=value`.
    pub fn parse(arg: &str) -> Result<Override, String> {
        let (key, value) = arg
            .split_once('=')
            .ok_or_else(|| format!("{arg:?} is not key=value"))?;
        Override::new(key.trim(), parse_value(value))
    }

    /// A setting of `key` to `value`.
    pub fn new(key: &str, value: Value) -> Result<Override, String> {
        Ok(Override {
            key: key.to_string(),
            path: parse_key(key)?,
            value: bare(value),
        })
    }

    /// The value as it is written on a command line (`250ms`, `0.02`, `true`).
    pub fn value_text(&self) -> String {
        match &self.value {
            Value::String(s) if parse_value(s.value()).as_str() == Some(s.value()) => s.value().to_string(),
            v => v.to_string(),
        }
    }
}

/// `key=value`, as `--set` takes it.
impl fmt::Display for Override {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.key, self.value_text())
    }
}

/// A command-line value: a TOML value if it is one, else the text as a string.
pub fn parse_value(text: &str) -> Value {
    let text = text.trim();
    match text.parse::<Value>() {
        Ok(v) => bare(v),
        Err(_) => Value::from(text),
    }
}

/// The value without the whitespace or comments it was parsed with.
fn bare(mut v: Value) -> Value {
    v.decor_mut().clear();
    v
}

fn parse_key(key: &str) -> Result<Vec<Seg>, String> {
    let dotted = key.replace('[', ".").replace(']', "");
    let path: Vec<Seg> = dotted
        .split('.')
        .map(|s| match s {
            "" => Err(format!("key {key:?} has an empty part")),
            "*" => Ok(Seg::All),
            s if s.bytes().all(|b| b.is_ascii_digit()) => s
                .parse()
                .map(Seg::Index)
                .map_err(|_| format!("key {key:?}: index {s} is too large")),
            s => Ok(Seg::Key(s.to_string())),
        })
        .collect::<Result<_, _>>()?;
    match path.first() {
        Some(Seg::Key(_)) => Ok(path),
        _ => Err(format!("key {key:?} must start with a name")),
    }
}

/// Applies `overrides` in order to the TOML `text`; the result is the edited text.
pub fn apply(text: &str, overrides: &[Override]) -> Result<String, String> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.message().trim().replace('\n', " "))?;
    for o in overrides {
        let set =
            set_in(doc.as_table_mut(), &o.path, &o.value).map_err(|reason| format!("--set {o}: {reason}"))?;
        if set == 0 {
            return Err(format!("--set {o}: the array has no entries to set"));
        }
    }
    Ok(doc.to_string())
}

/// Sets `path` under `table`; returns how many places were set (several with `*`).
fn set_in(table: &mut dyn TableLike, path: &[Seg], value: &Value) -> Result<usize, String> {
    let Some((Seg::Key(key), rest)) = path.split_first() else {
        return Err("an index needs an array".into());
    };
    if rest.is_empty() {
        match table.get_mut(key) {
            Some(item) => replace(item, value),
            None => {
                table.insert(key, Item::Value(value.clone()));
            }
        }
        return Ok(1);
    }
    if table.get(key).is_none() {
        if !matches!(rest[0], Seg::Key(_)) {
            return Err(format!("`{key}` is not in the file, so it has no entries"));
        }
        table.insert(key, Item::Value(Value::InlineTable(InlineTable::new())));
    }
    let child = table.get_mut(key).expect("present or just inserted");
    let (index, deeper) = match &rest[0] {
        Seg::Key(_) => {
            let inner = child
                .as_table_like_mut()
                .ok_or_else(|| format!("`{key}` is a value, not a table"))?;
            return set_in(inner, rest, value);
        }
        Seg::Index(i) => (Some(*i), &rest[1..]),
        Seg::All => (None, &rest[1..]),
    };
    let picked = |len: usize| -> Result<std::ops::Range<usize>, String> {
        match index {
            None => Ok(0..len),
            Some(i) if i < len => Ok(i..i + 1),
            Some(i) => Err(format!("`{key}` has {len} entries; there is no entry {i}")),
        }
    };
    let mut set = 0;
    match child {
        Item::ArrayOfTables(tables) => {
            if deeper.is_empty() {
                return Err(format!("set a key of a `{key}` entry, not the whole entry"));
            }
            for i in picked(tables.len())? {
                let t = tables.get_mut(i).expect("in range");
                set += set_in(t, deeper, value)?;
            }
        }
        Item::Value(Value::Array(values)) => {
            for i in picked(values.len())? {
                let v = values.get_mut(i).expect("in range");
                if deeper.is_empty() {
                    replace_value(v, value);
                    set += 1;
                } else {
                    let t = v
                        .as_inline_table_mut()
                        .ok_or_else(|| format!("entry {i} of `{key}` is not a table"))?;
                    set += set_in(t, deeper, value)?;
                }
            }
        }
        _ => return Err(format!("`{key}` is not an array")),
    }
    Ok(set)
}

fn replace(item: &mut Item, value: &Value) {
    match item {
        Item::Value(old) => replace_value(old, value),
        other => *other = Item::Value(value.clone()),
    }
}

/// Replaces a value, keeping the spaces and comment around it.
fn replace_value(old: &mut Value, value: &Value) {
    let decor = old.decor().clone();
    *old = value.clone();
    *old.decor_mut() = decor;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str, args: &[&str]) -> Result<String, String> {
        let overrides: Vec<Override> = args.iter().map(|a| Override::parse(a).unwrap()).collect();
        apply(text, &overrides)
    }

    #[test]
    fn values_are_toml_or_else_strings() {
        assert_eq!(parse_value("0.02").as_float(), Some(0.02));
        assert_eq!(parse_value("7").as_integer(), Some(7));
        assert_eq!(parse_value("true").as_bool(), Some(true));
        assert_eq!(parse_value("250ms").as_str(), Some("250ms"));
        assert_eq!(parse_value("\"quoted\"").as_str(), Some("quoted"));
        assert!(parse_value("{ min = \"1ms\", max = \"5ms\" }").is_inline_table());
        assert_eq!(
            Override::parse("clients.hold=1.5s").unwrap().to_string(),
            "clients.hold=1.5s"
        );
        assert_eq!(Override::parse("name=\"7\"").unwrap().to_string(), "name=\"7\"");
    }

    #[test]
    fn existing_keys_keep_their_line_and_comment() {
        let text = "nodes = 5\n[algorithm]\nttl = \"2s\" # the lease\n";
        let got = set(text, &["algorithm.ttl=500ms"]).unwrap();
        assert_eq!(got, "nodes = 5\n[algorithm]\nttl = \"500ms\" # the lease\n");
    }

    #[test]
    fn missing_keys_and_tables_are_created() {
        let got = set(
            "nodes = 3\n",
            &["algorithm.drift_factor=0.05", "network.latency.max=2ms"],
        )
        .unwrap();
        let v: toml::Table = toml::from_str(&got).unwrap();
        assert_eq!(v["algorithm"]["drift_factor"].as_float(), Some(0.05));
        assert_eq!(v["network"]["latency"]["max"].as_str(), Some("2ms"));
    }

    #[test]
    fn array_entries_by_index_or_all() {
        let text = "[[faults]]\nkind = \"pause\"\nduration = \"1s\"\n[[faults]]\nkind = \"pause\"\nduration = \"1s\"\n";
        let one = set(text, &["faults[1].duration=3s"]).unwrap();
        assert_eq!(one.matches("\"3s\"").count(), 1);
        let all = set(text, &["faults.*.duration=3s"]).unwrap();
        assert_eq!(all.matches("\"3s\"").count(), 2);
        let list = set(
            "persistence = [\"none\", \"none\"]\n",
            &["persistence.1=aof_always"],
        )
        .unwrap();
        assert_eq!(list, "persistence = [\"none\", \"aof_always\"]\n");
    }

    #[test]
    fn impossible_paths_are_errors_naming_the_setting() {
        let text = "[clients]\nhold = \"5ms\"\n[[faults]]\nkind = \"pause\"\n";
        let cases = [
            ("clients.hold.max=1ms", "`hold` is a value, not a table"),
            (
                "faults.3.duration=1s",
                "`faults` has 1 entries; there is no entry 3",
            ),
            ("nemesis.0.x=1", "not in the file"),
            ("clients.0=1", "not an array"),
        ];
        for (arg, needle) in cases {
            let err = set(text, &[arg]).unwrap_err();
            assert!(
                err.starts_with(&format!("--set {arg}")) && err.contains(needle),
                "{arg}: {err}"
            );
        }
        assert!(Override::parse("nokey").is_err());
        assert!(Override::parse("a..b=1").is_err());
        assert!(Override::parse("0.a=1").is_err());
    }
}
