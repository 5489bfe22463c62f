//! What pins the answers of a target used as a judge: [`Binding`] (built by [`of`]), the
//! values of the settings that change what the target answers, secret ones as salted
//! hashes, and the model its configuration pins.
//!
//! A judge's calibration record and its cached answers are bound to it (with the endpoint,
//! the model and the sampling settings of [`TargetInfo`]), so two exec judges that differ
//! only by `MODEL=a` and `MODEL=b` are two judges, and so are two keys for two accounts.
//!
//! A setting is secret by its name (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*AUTH*`...,
//! the rule that keeps such names out of `pass_env`), by where its value comes from (a
//! `${env:NAME}` reference, which the redactor treats as a secret), or by carrying
//! credentials in a URL (`https://user:pass@proxy`). Its value enters the binding only as
//! [`secret_digest`], a salted and stretched SHA-256 cut to 128 bits, never in clear, so it
//! can sit in a calibration record committed next to the suite.
//!
//! A model is pinned by the model id sent to an API, by a variable whose name has a `MODEL`
//! or `DEPLOYMENT` word (`MODEL`, `JUDGE_MODEL`, `MODEL_ID`) with a value, or by a
//! `--model NAME` (or `MODEL=NAME`) in an exec judge's command.

use std::collections::BTreeMap;

use gauntlet_core::calibration::SECRET_PREFIX;
use gauntlet_core::redact::Redactor;
use gauntlet_core::target::{TargetConfig, TargetInfo, TargetKind};
use sha2::{Digest, Sha256};

use crate::BuildError;
use crate::exec::{looks_like_a_secret, resolve_env_refs};

/// Rounds of the stretched hash of a secret: enough to make guessing a short password from
/// a committed record slow, few enough to cost milliseconds when a judge is set up.
const ROUNDS: u32 = 20_000;

/// What pins a target's answers beyond its endpoint and sampling settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Binding {
    /// Setting name (`env.MODEL`, `header.x-model`, `http.body`) to its value, or to
    /// [`SECRET_PREFIX`] and a salted hash for a secret one.
    pub settings: BTreeMap<String, String>,
    /// The model the configuration pins: its name, or for a model held in a secret setting
    /// the setting's name (its hash is in `settings`).
    pub pinned_model: Option<String>,
    /// The pinned model's name when it is not secret, to show as the model asked for.
    pub model: Option<String>,
}

/// The binding of a target built from `cfg` (`info` is what the built target says of
/// itself). `${env:NAME}` references are read again, as the target read them, and their
/// values registered in `redactor`.
pub fn of(
    cfg: &TargetConfig,
    info: &TargetInfo,
    redactor: &mut Redactor,
) -> Result<Binding, BuildError> {
    let mut b = Builder {
        kind: cfg.kind.map_or("target", TargetKind::as_str),
        out: Binding::default(),
        models: Vec::new(),
        redactor,
    };
    for (name, value) in &cfg.headers {
        b.value(format!("header.{}", name.to_ascii_lowercase()), name, value)?;
    }
    if let Some(env) = &cfg.api_key_env {
        // The name only: which variable holds the key, not the key.
        b.out.settings.insert("api_key_env".into(), env.clone());
    }
    if let Some(a) = &cfg.azure {
        b.out
            .settings
            .insert("azure.api_version".into(), a.api_version.clone());
    }
    match cfg.kind {
        Some(TargetKind::Exec) => {
            if let Some(e) = &cfg.exec {
                b.command(&e.command);
                b.environment(&e.env, &e.pass_env)?;
            }
        }
        Some(TargetKind::Proxy) => {
            if let Some(p) = &cfg.proxy {
                b.out
                    .settings
                    .insert("proxy.command".into(), p.command.join(" "));
                b.command(&p.command);
                b.environment(&p.env, &p.pass_env)?;
            }
        }
        Some(TargetKind::Http) => {
            if let Some(h) = &cfg.http {
                b.http(h)?;
            }
        }
        _ => {}
    }
    let Builder {
        mut out, models, ..
    } = b;
    // A model the API is asked for pins it; otherwise the model settings found.
    if let Some(m) = &info.model {
        out.pinned_model = Some(m.clone());
        out.model = Some(m.clone());
    } else if !models.is_empty() {
        let clear: Vec<&(String, Option<String>)> =
            models.iter().filter(|(_, v)| v.is_some()).collect();
        out.pinned_model = Some(match models.as_slice() {
            [(_, Some(v))] => v.clone(),
            [(name, None)] => name.clone(),
            _ => models
                .iter()
                .map(|(n, v)| match v {
                    Some(v) => format!("{n}={v}"),
                    None => n.clone(),
                })
                .collect::<Vec<_>>()
                .join(", "),
        });
        if let [(_, Some(v))] = clear.as_slice() {
            out.model = Some(v.clone());
        }
    }
    Ok(out)
}

struct Builder<'a> {
    kind: &'static str,
    out: Binding,
    /// Model settings found: the setting's name and its value when not secret.
    models: Vec<(String, Option<String>)>,
    redactor: &'a mut Redactor,
}

impl Builder<'_> {
    /// Records one setting: its value, or a hash when it is secret.
    fn value(&mut self, key: String, name: &str, raw: &str) -> Result<(), BuildError> {
        let referenced = raw.contains("${env:");
        let secret = referenced || looks_like_a_secret(name) || has_credentials(raw);
        let value = if referenced {
            resolve_env_refs(self.kind, name, raw, self.redactor)?
        } else {
            raw.to_owned()
        };
        if is_model_name(name) && !looks_like_a_secret(name) && !value.trim().is_empty() {
            let shown = (!secret).then(|| value.clone());
            self.models.push((key.clone(), shown));
        }
        let stored = if secret {
            secret_digest(&key, &value)
        } else {
            value
        };
        self.out.settings.insert(key, stored);
        Ok(())
    }

    /// The `env:` and `pass_env` variables of an exec or proxy judge, with their values.
    fn environment(
        &mut self,
        env: &BTreeMap<String, String>,
        pass_env: &[String],
    ) -> Result<(), BuildError> {
        for (name, raw) in env {
            self.value(format!("env.{name}"), name, raw)?;
        }
        for name in pass_env {
            // A variable gauntlet's environment does not have is not passed.
            if let Some(v) = std::env::var_os(name) {
                let v = v.to_string_lossy().into_owned();
                self.value(format!("pass_env.{name}"), name, &v)?;
            }
        }
        Ok(())
    }

    /// A model named in the command line: `--model NAME`, `--model=NAME`, `MODEL=NAME` (as
    /// `env MODEL=NAME python3 judge.py` writes it). The command itself is the endpoint.
    fn command(&mut self, command: &[String]) {
        let mut args = command.iter();
        while let Some(a) = args.next() {
            if a == "--model" {
                if let Some(v) = args.next().filter(|v| !v.is_empty()) {
                    self.models.push(("--model".into(), Some(v.clone())));
                }
            } else if let Some(v) = a.strip_prefix("--model=").filter(|v| !v.is_empty()) {
                self.models.push(("--model".into(), Some(v.to_owned())));
            } else if let Some((name, v)) = a.split_once('=')
                && is_model_name(name)
                && !looks_like_a_secret(name)
                && !v.is_empty()
                && !name.starts_with('-')
            {
                self.models.push((name.to_owned(), Some(v.to_owned())));
            }
        }
    }

    /// An HTTP app as a judge: its method, URL, headers, body template and answer path; a
    /// `model` field at the top of the body pins the model.
    fn http(&mut self, h: &gauntlet_core::target::HttpTargetConfig) -> Result<(), BuildError> {
        self.out
            .settings
            .insert("http.method".into(), h.method.to_ascii_uppercase());
        self.value("http.url".into(), "url", &h.url)?;
        for (name, value) in &h.headers {
            self.value(format!("header.{}", name.to_ascii_lowercase()), name, value)?;
        }
        if let Some(body) = &h.body {
            self.value("http.body".into(), "body", &body.to_string())?;
            if let Some(m) = body.get("model").and_then(|m| m.as_str())
                && !m.contains("{{")
                && !m.contains("${env:")
                && !m.trim().is_empty()
            {
                self.models
                    .push(("http.body.model".into(), Some(m.to_owned())));
            }
        }
        self.out
            .settings
            .insert("http.answer_path".into(), h.answer_path.clone());
        Ok(())
    }
}

/// Whether a variable's name says it chooses a model: a word of it (split at `_`, `-`, `.`)
/// is `MODEL` or `DEPLOYMENT`.
fn is_model_name(name: &str) -> bool {
    name.split(['_', '-', '.'])
        .any(|w| w.eq_ignore_ascii_case("model") || w.eq_ignore_ascii_case("deployment"))
}

/// Whether a value holds a URL with credentials (`scheme://user:pass@host`).
fn has_credentials(value: &str) -> bool {
    value.match_indices("://").any(|(at, _)| {
        let rest = &value[at + 3..];
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        authority.contains('@')
    })
}

/// A secret setting's value as its binding holds it: [`SECRET_PREFIX`] and 128 bits of a
/// SHA-256 salted with the setting's name and stretched over [`ROUNDS`] rounds. Equal
/// values give equal digests (a record can be matched run after run); the value cannot be
/// read back, and guessing it costs the rounds for every guess.
pub fn secret_digest(key: &str, value: &str) -> String {
    let salt = Sha256::digest(format!("gauntlet judge binding\0{key}").as_bytes());
    let mut h = Sha256::new();
    h.update(salt);
    h.update(value.as_bytes());
    let mut d = h.finalize();
    for _ in 0..ROUNDS {
        let mut h = Sha256::new();
        h.update(d);
        h.update(salt);
        d = h.finalize();
    }
    let mut s = String::from(SECRET_PREFIX);
    for b in &d[..16] {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(env: &[(&str, &str)], command: &[&str]) -> TargetConfig {
        let mut cfg = TargetConfig::parse(&format!("exec:{}", command.join(" "))).unwrap();
        cfg.exec.as_mut().unwrap().env = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        cfg
    }

    fn bind(cfg: &TargetConfig) -> Binding {
        let info = TargetInfo {
            kind: "exec".into(),
            label: "exec:x".into(),
            ..TargetInfo::default()
        };
        of(cfg, &info, &mut Redactor::new()).unwrap()
    }

    #[test]
    fn an_exec_judge_is_bound_to_the_values_of_its_variables() {
        let a = bind(&exec(
            &[("MODEL", "a"), ("TZ_HINT", "x")],
            &["python3", "j.py"],
        ));
        let b = bind(&exec(
            &[("MODEL", "b"), ("TZ_HINT", "x")],
            &["python3", "j.py"],
        ));
        assert_ne!(a, b);
        assert_eq!(a.settings["env.MODEL"], "a");
        assert_eq!(a.settings["env.TZ_HINT"], "x");
        assert_eq!(a.pinned_model.as_deref(), Some("a"));
        assert_eq!(a.model.as_deref(), Some("a"));
        // Nothing names a model: nothing is pinned.
        let none = bind(&exec(&[("TZ_HINT", "x")], &["python3", "j.py"]));
        assert_eq!(none.pinned_model, None);
        // A model in the command line pins it too.
        for cmd in [
            &["python3", "j.py", "--model", "m1"][..],
            &["python3", "j.py", "--model=m1"],
            &["env", "JUDGE_MODEL=m1", "python3", "j.py"],
        ] {
            assert_eq!(bind(&exec(&[], cmd)).pinned_model.as_deref(), Some("m1"));
        }
        assert_eq!(
            bind(&exec(&[], &["python3", "-m", "judge"])).pinned_model,
            None
        );
    }

    #[test]
    fn a_secret_changes_the_binding_and_never_shows() {
        // Secret by name, even written in clear in the file: hashed, and its value binds.
        let key = |v: &str| bind(&exec(&[("OPENAI_API_KEY", v), ("MODEL", "a")], &["j"]));
        let one = key("sk-first-0123456789");
        let two = key("sk-second-0123456789");
        assert_ne!(
            one.settings["env.OPENAI_API_KEY"],
            two.settings["env.OPENAI_API_KEY"]
        );
        for b in [&one, &two] {
            let text = format!("{b:?}");
            assert!(
                !text.contains("sk-first") && !text.contains("sk-second"),
                "{text}"
            );
            assert!(b.settings["env.OPENAI_API_KEY"].starts_with(SECRET_PREFIX));
        }
        // Secret by where it comes from: a `${env:NAME}` reference, read and hashed.
        let path = std::env::var("PATH").expect("PATH is set in tests");
        let r = bind(&exec(&[("SETTING", "${env:PATH}")], &["j"]));
        assert!(r.settings["env.SETTING"].starts_with(SECRET_PREFIX));
        assert!(!format!("{r:?}").contains(&path));
        // A proxy URL with credentials in it.
        let proxy = bind(&exec(
            &[("UPSTREAM", "http://u:hunter2@proxy:3128")],
            &["j"],
        ));
        assert!(!format!("{proxy:?}").contains("hunter2"));
        // A model chosen through a reference pins the model, by the setting's name.
        let m = bind(&exec(&[("MODEL", "${env:PATH}")], &["j"]));
        assert_eq!(m.pinned_model.as_deref(), Some("env.MODEL"));
        assert_eq!(m.model, None);
        assert!(!format!("{m:?}").contains(&path));
    }

    #[test]
    fn secret_digests_are_stable_salted_by_name_and_short() {
        let a = secret_digest("env.API_KEY", "sk-1");
        assert_eq!(a, secret_digest("env.API_KEY", "sk-1"));
        assert_ne!(a, secret_digest("env.OTHER_KEY", "sk-1"));
        assert_ne!(a, secret_digest("env.API_KEY", "sk-2"));
        assert_eq!(a.len(), SECRET_PREFIX.len() + 32);
    }
}
