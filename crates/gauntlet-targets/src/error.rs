//! The errors of building a target and of reading a model's reply: [`BuildError`] (a target's
//! configuration cannot become a working target: a missing variable, section or model, a bad
//! header, URL, template or program) and [`WireError`] (a completion body that is not what the
//! wire format promises).
//!
//! Failures while a trial runs are `gauntlet_core::target::TargetError`s; these are the ones
//! before any trial, and the binary reports them with [`BuildError::hint`] as its `hint:` line.

use gauntlet_core::redact::Redactor;

/// Why a URL does not parse (the `url` crate's error, named through reqwest's re-export).
pub type UrlError = <reqwest::Url as std::str::FromStr>::Err;

/// Why a target (or the recording proxy) could not be built from its configuration.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The variable named by `api_key_env` is not set.
    #[error("the environment variable `{name}` (api_key_env) is not set")]
    ApiKeyUnset {
        /// The variable.
        name: String,
    },
    /// A target on the vendor's own API found no key in the conventional variable.
    #[error("no API key for `{host}`: the environment variable `{name}` is not set")]
    ApiKeyMissing {
        /// The variable.
        name: String,
        /// The vendor's host.
        host: String,
    },
    /// The variable of a `${env:NAME}` reference in a header is not set.
    #[error("the environment variable `{name}` is not set")]
    EnvUnset {
        /// The variable.
        name: String,
    },
    /// A header value has `${env:` without its closing brace.
    #[error("unclosed `${{env:` in `{value}`")]
    UnclosedEnvRef {
        /// The header value as configured.
        value: String,
    },
    /// A configured header name is not a valid HTTP header name.
    #[error("invalid header name `{0}`")]
    HeaderName(String),
    /// A configured header value is not a valid HTTP header value.
    #[error("invalid value for header `{0}`")]
    HeaderValue(String),
    /// The API key cannot be sent in a header (a newline or other control character).
    #[error("the API key is not a valid header value")]
    ApiKeyHeader,
    /// A chat-model target without `model:`.
    #[error("the {kind} target needs a model")]
    NoModel {
        /// `openai` or `anthropic`.
        kind: &'static str,
    },
    /// The HTTP client could not be built.
    // reqwest says only "builder error"; the cause (no CA certificates, a bad TLS setting)
    // is in its sources.
    #[error("failed to build the HTTP client: {}", error_chain(.0))]
    HttpClient(#[source] reqwest::Error),
    /// A target's endpoint URL does not parse.
    #[error("invalid URL `{url}`: {source}")]
    Url {
        /// The URL, redacted.
        url: String,
        /// Why it does not parse.
        source: UrlError,
    },
    /// `fake:NAME` with a persona that does not exist.
    #[error("unknown fake persona `{0}`; choose safe, vulnerable or scripted")]
    UnknownPersona(String),
    /// A target name that is neither defined in the config file nor a `KIND:ARG` form.
    #[error("unknown target `{0}`; define it in the config file or write KIND:ARG")]
    UnknownTarget(String),
    /// A judge or simulated user given a target that is not a chat model.
    #[error("a `{0}` target cannot serve as a model; use fake, openai or anthropic")]
    NotAModel(&'static str),
    /// An embeddings model given a target that is not an OpenAI-compatible endpoint.
    #[error(
        "a `{0}` target has no embeddings endpoint; use an OpenAI-compatible one (openai:MODEL, or a named target with kind: openai)"
    )]
    NoEmbeddings(&'static str),
    /// `--cache` asked for a target whose calls cannot be cached.
    #[error(
        "a `{0}` target cannot be cached: it runs its own loop, and what it did cannot be replayed from a model's answers"
    )]
    NotCacheable(&'static str),
    /// A judge or simulated user given a target without a kind.
    #[error("the model target has no kind")]
    NoModelKind,
    /// A target kind without the section that configures it.
    #[error("the {kind} target needs {wants}")]
    MissingSection {
        /// `http`, `exec` or `proxy`.
        kind: &'static str,
        /// The section, as the message names it.
        wants: &'static str,
    },
    /// An `http` target's method is not an HTTP method.
    #[error("invalid HTTP method `{0}`")]
    HttpMethod(String),
    /// An `http` target's `answer_path` or `tool_calls_path` is not a JSONPath.
    #[error("invalid {field}: {source}")]
    JsonPath {
        /// `answer_path` or `tool_calls_path`.
        field: &'static str,
        /// Why it does not parse.
        source: serde_json_path::ParseError,
    },
    /// An `http` target's body template does not compile.
    #[error("invalid template `{template}`: {source}")]
    Template {
        /// The template as configured.
        template: String,
        /// Why it does not compile.
        source: minijinja::Error,
    },
    /// An `http` target's URL template does not compile.
    #[error("invalid url template: {0}")]
    UrlTemplate(#[source] minijinja::Error),
    /// An agent target (`exec`, or `proxy`, which launches its agent the same way) is
    /// misconfigured.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// A `proxy` target without an upstream.
    #[error(
        "the proxy target has no upstream: set `upstream:` under `proxy:` to the model API's base URL (or pass --base-url)"
    )]
    NoUpstream,
    /// A `proxy` target's upstream does not parse.
    #[error("proxy target: the upstream `{url}` is not a valid URL: {source}")]
    ProxyTargetUpstream {
        /// The upstream, redacted.
        url: String,
        /// Why it does not parse.
        source: UrlError,
    },
    /// The recording proxy's upstream does not make valid endpoint URLs.
    #[error("the proxy's upstream `{url}` is not a valid base URL: {source}")]
    ProxyUpstream {
        /// The upstream, redacted.
        url: String,
        /// Why it does not parse.
        source: UrlError,
    },
    /// The recording proxy's HTTP client could not be built.
    #[error("failed to build the proxy's HTTP client: {}", error_chain(.0))]
    ProxyHttpClient(#[source] reqwest::Error),
}

impl BuildError {
    /// What the user can do about it, where the message does not already say.
    pub fn hint(&self) -> Option<&str> {
        match self {
            BuildError::ApiKeyUnset { .. } => Some(
                "export the variable before running gauntlet, or point `api_key_env` at the one that holds the key",
            ),
            BuildError::ApiKeyMissing { .. } => Some(
                "export the variable or write it in a `.env` file in the folder gauntlet runs in (NAME=value; the environment wins); or name the variable that holds the key with --api-key-env or `api_key_env`",
            ),
            BuildError::EnvUnset { .. } => Some(
                "export the variable before running gauntlet, or remove the `${env:...}` reference from the header",
            ),
            BuildError::UnclosedEnvRef { .. } => Some("write the reference as `${env:NAME}`"),
            BuildError::NoModel { kind } => Some(match *kind {
                "anthropic" => "set `model:` in the target, or write anthropic:MODEL",
                _ => "set `model:` in the target, or write openai:MODEL",
            }),
            BuildError::Agent(e) => e.hint(),
            _ => None,
        }
    }

    /// The error with every secret `redactor` knows replaced in its texts. Sources (parse
    /// and client errors) carry configuration text only, never a resolved secret.
    pub fn redacted(self, redactor: &Redactor) -> BuildError {
        let r = |s: String| redactor.redact(&s).into_owned();
        match self {
            BuildError::ApiKeyUnset { name } => BuildError::ApiKeyUnset { name: r(name) },
            BuildError::ApiKeyMissing { name, host } => BuildError::ApiKeyMissing {
                name: r(name),
                host: r(host),
            },
            BuildError::EnvUnset { name } => BuildError::EnvUnset { name: r(name) },
            BuildError::UnclosedEnvRef { value } => BuildError::UnclosedEnvRef { value: r(value) },
            BuildError::HeaderName(h) => BuildError::HeaderName(r(h)),
            BuildError::HeaderValue(h) => BuildError::HeaderValue(r(h)),
            BuildError::Url { url, source } => BuildError::Url {
                url: r(url),
                source,
            },
            BuildError::UnknownPersona(p) => BuildError::UnknownPersona(r(p)),
            BuildError::UnknownTarget(t) => BuildError::UnknownTarget(r(t)),
            BuildError::HttpMethod(m) => BuildError::HttpMethod(r(m)),
            BuildError::Template { template, source } => BuildError::Template {
                template: r(template),
                source,
            },
            BuildError::Agent(e) => BuildError::Agent(e.redacted(redactor)),
            BuildError::ProxyTargetUpstream { url, source } => BuildError::ProxyTargetUpstream {
                url: r(url),
                source,
            },
            BuildError::ProxyUpstream { url, source } => BuildError::ProxyUpstream {
                url: r(url),
                source,
            },
            other => other,
        }
    }
}

/// Why an agent process target (`exec`, or `proxy`) cannot be built. Every message names the
/// target kind it is for.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// `command` is empty.
    #[error("the {kind} target has no command; add `exec: {{command: [python3, agent.py]}}`")]
    NoCommand {
        /// `exec` or `proxy`.
        kind: &'static str,
    },
    /// The command's program is an empty string.
    #[error("the {kind} target's command starts with an empty program name")]
    EmptyProgram {
        /// `exec` or `proxy`.
        kind: &'static str,
    },
    /// An `env` key that cannot be an environment variable name.
    #[error("{kind} target: `{key}` is not a valid environment variable name")]
    EnvName {
        /// `exec` or `proxy`.
        kind: &'static str,
        /// The key.
        key: String,
    },
    /// An `env` key that gauntlet sets itself.
    #[error(
        "{kind} target: `{key}` cannot be set in `env`; gauntlet sets the GAUNTLET_ variables for each trial"
    )]
    ReservedEnv {
        /// `exec` or `proxy`.
        kind: &'static str,
        /// The key.
        key: String,
    },
    /// A `pass_env` name that looks like a credential, whose value would not be redacted.
    #[error(
        "{kind} target: `{name}` looks like a secret, and `pass_env` values are not redacted; write `env: {{{name}: \"${{env:{name}}}\"}}` instead"
    )]
    SecretPassEnv {
        /// `exec` or `proxy`.
        kind: &'static str,
        /// The variable.
        name: String,
    },
    /// `frozen_time: ""`.
    #[error("{kind} target: `frozen_time` is empty")]
    EmptyFrozenTime {
        /// `exec` or `proxy`.
        kind: &'static str,
    },
    /// The working directory, against which the command is resolved, cannot be read.
    #[error("{kind} target: cannot read the current directory: {source}")]
    CurrentDir {
        /// `exec` or `proxy`.
        kind: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// A value with `${env:` and no closing brace.
    #[error(
        "{kind} target: the value of `{key}` has an unterminated `${{env:`; write `${{env:NAME}}`"
    )]
    UnterminatedEnvRef {
        /// `exec` or `proxy`.
        kind: &'static str,
        /// The `env` key whose value it is.
        key: String,
    },
    /// A value with `${env:}`.
    #[error("{kind} target: the value of `{key}` has an empty `${{env:}}` reference")]
    EmptyEnvRef {
        /// `exec` or `proxy`.
        kind: &'static str,
        /// The `env` key whose value it is.
        key: String,
    },
    /// A `${env:NAME}` reference to a variable that is not set.
    #[error("{kind} target: environment variable `{name}` (for `{key}`) is not set")]
    EnvUnset {
        /// `exec` or `proxy`.
        kind: &'static str,
        /// The variable.
        name: String,
        /// The `env` key whose value refers to it.
        key: String,
    },
    /// A `${env:NAME}` reference to a variable that is not UTF-8.
    #[error("{kind} target: environment variable `{name}` (for `{key}`) is not valid UTF-8")]
    EnvNotUnicode {
        /// `exec` or `proxy`.
        kind: &'static str,
        /// The variable.
        name: String,
        /// The `env` key whose value refers to it.
        key: String,
    },
    /// A program path that names no file.
    #[error(
        "{kind} target: `{program}` does not exist (looked for {looked}; relative paths are resolved against the directory gauntlet runs in)"
    )]
    NoSuchProgram {
        /// `exec` or `proxy`.
        kind: &'static str,
        /// The program as configured.
        program: String,
        /// Where it was looked for.
        looked: String,
    },
    /// A bare program name not found on `PATH`.
    #[error("{kind} target: `{program}` is not an executable on PATH; give its path or install it")]
    NotOnPath {
        /// `exec` or `proxy`.
        kind: &'static str,
        /// The program as configured.
        program: String,
    },
}

impl AgentError {
    /// What the user can do about it, where the message does not already say.
    pub fn hint(&self) -> Option<&str> {
        match self {
            AgentError::EnvUnset { .. } => Some(
                "export the variable before running gauntlet, or remove the `${env:...}` reference",
            ),
            _ => None,
        }
    }

    fn redacted(self, redactor: &Redactor) -> AgentError {
        let r = |s: String| redactor.redact(&s).into_owned();
        match self {
            AgentError::EnvName { kind, key } => AgentError::EnvName { kind, key: r(key) },
            AgentError::ReservedEnv { kind, key } => AgentError::ReservedEnv { kind, key: r(key) },
            AgentError::UnterminatedEnvRef { kind, key } => {
                AgentError::UnterminatedEnvRef { kind, key: r(key) }
            }
            AgentError::EmptyEnvRef { kind, key } => AgentError::EmptyEnvRef { kind, key: r(key) },
            AgentError::EnvUnset { kind, name, key } => AgentError::EnvUnset {
                kind,
                name: r(name),
                key: r(key),
            },
            AgentError::EnvNotUnicode { kind, name, key } => AgentError::EnvNotUnicode {
                kind,
                name: r(name),
                key: r(key),
            },
            AgentError::NoSuchProgram {
                kind,
                program,
                looked,
            } => AgentError::NoSuchProgram {
                kind,
                program: r(program),
                looked: r(looked),
            },
            AgentError::NotOnPath { kind, program } => AgentError::NotOnPath {
                kind,
                program: r(program),
            },
            other => other,
        }
    }
}

/// A model's reply body that is not a completion of its wire format.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The body is not JSON.
    #[error("not valid JSON ({0})")]
    NotJson(#[source] serde_json::Error),
    /// An OpenAI chat completion without `choices`.
    #[error("the response has no `choices`")]
    NoChoices,
    /// An OpenAI chat completion whose first choice has no `message`.
    #[error("the first choice has no `message`")]
    NoMessage,
    /// An Anthropic message without a `content` array.
    #[error("the response has no `content` array")]
    NoContent,
    /// An OpenAI Responses API response without an `output` array.
    #[error("the response has no `output` array")]
    NoOutput,
    /// A Responses API response (or stream) that reports its own failure.
    #[error("the response failed: {0}")]
    Failed(String),
    /// A Responses API stream that ended before its `response.completed` event.
    #[error("the stream ended without a `response.completed` event")]
    StreamCut,
}

/// The error and its sources on one line (reqwest hides the useful part in `source()`).
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_kept_and_hints_name_what_to_do() {
        let e = BuildError::ApiKeyUnset {
            name: "OPENAI_API_KEY".into(),
        };
        assert_eq!(
            e.to_string(),
            "the environment variable `OPENAI_API_KEY` (api_key_env) is not set"
        );
        assert!(e.hint().is_some_and(|h| h.contains("api_key_env")));
        let e = BuildError::from(AgentError::NoCommand { kind: "proxy" });
        assert_eq!(
            e.to_string(),
            "the proxy target has no command; add `exec: {command: [python3, agent.py]}`"
        );
        assert_eq!(e.hint(), None);
        let e = BuildError::UnclosedEnvRef {
            value: "Bearer ${env:KEY".into(),
        };
        assert_eq!(e.to_string(), "unclosed `${env:` in `Bearer ${env:KEY`");
    }

    #[test]
    fn redaction_reaches_every_text() {
        let mut r = Redactor::new();
        r.add("TOKEN", "s3cr3t-value");
        let e = BuildError::from(AgentError::NoSuchProgram {
            kind: "exec",
            program: "./s3cr3t-value".into(),
            looked: "/tmp/s3cr3t-value".into(),
        })
        .redacted(&r);
        assert!(!e.to_string().contains("s3cr3t-value"), "{e}");
        let e = BuildError::Url {
            url: "http://x/s3cr3t-value".into(),
            source: UrlError::EmptyHost,
        }
        .redacted(&r);
        assert!(!e.to_string().contains("s3cr3t-value"), "{e}");
        assert!(std::error::Error::source(&e).is_some());
    }
}
