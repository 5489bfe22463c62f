//! The plan of a run: [`Plan`], built from the loaded suites and a [`Selection`].
//!
//! It owns what every command that runs cases needs before the first trial: the context
//! each suite's cases run in ([`SuiteContext`]: the system prompt with the canary in place,
//! the tools, the defaults), the packs the state requires, how many cases the selection
//! takes, the lazy stream of [`PlannedCase`]s, the harness files to hash, and the run
//! manifest. JSON lines includes are streamed when the run reads them; the count of the
//! cases they contribute was taken while they were validated.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use gauntlet_core::event::{Invocation, REPORT_SCHEMA_VERSION, RunManifest, ShardOf, SuiteRef};
use gauntlet_core::expect::{NoCanaryCheck, Oracle};
use gauntlet_core::plan::{PlannedCase, SuiteContext};
use gauntlet_core::suite::Case;
use gauntlet_core::summary::PackRequirements;
use gauntlet_core::target::TargetInfo;

use crate::filter::Selection;
use crate::load::{LoadedSuite, stream_jsonl};

/// Run-wide settings that shape the suites' contexts.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanSettings<'a> {
    /// The run's canary (`--canary`), which overrides the suites'.
    pub canary: Option<&'a str>,
    /// The run's per-trial time limit (`--timeout-ms`), which overrides the suites'.
    pub timeout_ms: Option<u64>,
    /// `--blocked-is-defended`: a content filter's stop counts as defended in every suite.
    pub blocked_is_defended: bool,
    /// The run's converter chain (`--converters`), applied after each case's own.
    pub converters: &'a [String],
    /// The run seed, from which each converted turn's seed derives.
    pub seed: u64,
    /// The run's strategy (`redteam --strategy attacker`), applied to every case that has a
    /// check able to tell when its objective is reached.
    pub strategy: Option<&'a gauntlet_core::strategy::Strategy>,
}

/// A case under the run's strategy, or `None` when it keeps its own: a case that already
/// has a strategy or a simulated user, or has no check that can tell, turn by turn, whether
/// the objective was reached (a violation check or a judge). The others lose the checks that
/// grade one answer to one written prompt (`refusal`, `contains`...), which say nothing
/// about a conversation an attacker wrote, and keep the ones that look for the violation.
pub fn with_strategy(case: &Case, strategy: &gauntlet_core::strategy::Strategy) -> Option<Case> {
    use gauntlet_core::expect::Oracle;
    // A benign twin is the task without the attack: no attacker plays it.
    if case.strategy.is_some() || case.simulated_user.is_some() || case.benign_of.is_some() {
        return None;
    }
    let deciding = |o: &Oracle| o.is_violation_check() || !o.is_objective();
    if !case
        .expect
        .iter()
        .any(|e| deciding(&e.oracle) && e.oracle.is_objective())
    {
        return None;
    }
    let mut c = case.clone();
    let mut s = strategy.clone();
    if s.objective.is_none() {
        s.objective = s.objective_for(case);
    }
    // The run's ranking judge (`--tree-judge`) ranks the cases that have it among their
    // checks; the others are ranked by the objective reading.
    let judged = |id: &str| {
        case.expect
            .iter()
            .any(|e| matches!(&e.oracle, Oracle::Judge(j) if j.check.as_deref() == Some(id)))
    };
    if s.judge.as_deref().is_some_and(|id| !judged(id)) {
        s.judge = None;
    }
    s.objective.as_ref()?;
    c.expect.retain(|e| deciding(&e.oracle));
    c.strategy = Some(s);
    Some(c)
}

/// One suite of the plan.
struct PlannedSuite {
    loaded: LoadedSuite,
    context: Arc<SuiteContext>,
    /// The suite's cases held in memory (inline and included YAML), shared by every pass.
    inline: Arc<Vec<Arc<Case>>>,
}

/// The shared parts of one suite that the case stream needs.
type StreamPart = (Arc<SuiteContext>, Arc<Vec<Arc<Case>>>, Vec<PathBuf>);

/// Whether the stream takes a case (`None`) or the benign twin of that id of a case
/// (`Some(id)`).
type Keep = Arc<dyn Fn(&Case, Option<&str>) -> bool + Send + Sync>;

/// A case the stream takes, then its benign twin when it has one that the stream takes (a
/// twin follows its case, through a filter, a shard or a sample, so that it runs where its
/// case does).
fn with_twin(case: Arc<Case>, keep: &Keep) -> impl Iterator<Item = Arc<Case>> + use<> {
    let twin = case
        .benign
        .as_ref()
        .map(|_| format!("{}{}", case.id, gauntlet_core::suite::BENIGN_SUFFIX))
        .filter(|id| keep(&case, Some(id)))
        .and_then(|_| case.benign_twin())
        .map(Arc::new);
    let base = keep(&case, None).then_some(case);
    base.into_iter().chain(twin)
}

/// What a run will do.
pub struct Plan {
    suites: Vec<PlannedSuite>,
    selection: Arc<Selection>,
    packs: PackRequirements,
    converters: Arc<Vec<String>>,
    seed: u64,
    strategy: Option<Arc<gauntlet_core::strategy::Strategy>>,
}

/// Facts about a run that do not come from its suites.
#[derive(Debug, Clone)]
pub struct ManifestFacts {
    /// The run id.
    pub run_id: String,
    /// gauntlet's version.
    pub gauntlet_version: String,
    /// When the run (first) started.
    pub started_at: String,
    /// The command (`run`, `redteam`, `regrade`, `flaky`).
    pub command: String,
    /// The target, as it describes itself (with its evidence level and side-effect mode).
    pub target: TargetInfo,
    /// Trials per case.
    pub k: u32,
    /// The run seed.
    pub seed: u64,
    /// The judge model and prompt version, when judges run.
    pub judge: Option<String>,
    /// Notes for the manifest.
    pub notes: BTreeMap<String, String>,
    /// How the run was invoked.
    pub invocation: Option<Invocation>,
    /// The run id the shards of a sharded run share, when it was given one.
    pub shard_run: Option<String>,
}

impl Plan {
    /// Plans a run over loaded suites (loaded with the same selection, so that their
    /// `selected` counts hold).
    pub fn new(suites: Vec<LoadedSuite>, selection: Selection, settings: PlanSettings<'_>) -> Plan {
        let mut packs = pack_requirements(&suites);
        // A shard holds part of the cases; its packs are checked when the shards merge.
        packs.deferred = selection.shard.is_some();
        let suites = suites
            .into_iter()
            .map(|mut loaded| {
                let context = Arc::new(suite_context(&loaded, &settings));
                let inline = std::mem::take(&mut loaded.suite.cases)
                    .into_iter()
                    .map(Arc::new)
                    .collect();
                PlannedSuite {
                    loaded,
                    context,
                    inline: Arc::new(inline),
                }
            })
            .collect();
        Plan {
            suites,
            selection: Arc::new(selection),
            packs,
            converters: Arc::new(settings.converters.to_vec()),
            seed: settings.seed,
            strategy: settings.strategy.cloned().map(Arc::new),
        }
    }

    /// Replaces every secret the run knows (API keys read from the environment) in the text
    /// the suites put into prompts, before anything is sent: a system prompt file is
    /// whatever the suite's author pointed it at.
    pub fn redact_prompts(&mut self, redactor: &gauntlet_core::redact::Redactor) {
        for s in &mut self.suites {
            if let Some(p) = &s.context.system_prompt
                && let std::borrow::Cow::Owned(clean) = redactor.redact(p)
            {
                Arc::make_mut(&mut s.context).system_prompt = Some(clean);
            }
            // The prompt variants (`prompts:`) are sent as the system prompt of their columns.
            for i in 0..s.context.prompts.len() {
                if let std::borrow::Cow::Owned(clean) = redactor.redact(&s.context.prompts[i].text)
                {
                    Arc::make_mut(&mut s.context).prompts[i].text = clean;
                }
            }
        }
    }

    /// Lets `f` change each suite's context before the run, with the loaded suite at hand:
    /// the binary gives a suite with MCP servers their tools' descriptions and backends.
    pub fn attach_tools<E>(
        &mut self,
        mut f: impl FnMut(&LoadedSuite, &mut SuiteContext) -> Result<(), E>,
    ) -> Result<(), E> {
        for s in &mut self.suites {
            if !s.loaded.suite.agent.mcp_servers.is_empty() {
                f(&s.loaded, Arc::make_mut(&mut s.context))?;
            }
        }
        Ok(())
    }

    /// Cases the selection takes.
    pub fn planned(&self) -> usize {
        self.suites.iter().map(|s| s.loaded.selected).sum()
    }

    /// The packs the state requires.
    pub fn packs(&self) -> &PackRequirements {
        &self.packs
    }

    /// The selection.
    pub fn selection(&self) -> &Selection {
        &self.selection
    }

    /// Each suite's context.
    pub fn contexts(&self) -> impl Iterator<Item = &Arc<SuiteContext>> {
        self.suites.iter().map(|s| &s.context)
    }

    /// The cases the selection takes, streamed in suite order, each followed by its benign
    /// twin.
    pub fn cases(&self) -> impl Iterator<Item = PlannedCase> + Send + use<> {
        let sel = Arc::clone(&self.selection);
        self.stream(Arc::new(move |c: &Case, twin: Option<&str>| match twin {
            None => sel.keeps(c),
            Some(id) => sel.keeps_twin(c, id),
        }))
    }

    /// Every case of the suites and their benign twins, whatever the selection (a re-grade
    /// finds the cases of the stored run among them).
    pub fn all_cases(&self) -> impl Iterator<Item = PlannedCase> + Send + use<> {
        self.stream(Arc::new(|_: &Case, _: Option<&str>| true))
    }

    fn stream(&self, keep: Keep) -> impl Iterator<Item = PlannedCase> + Send + use<> {
        let parts: Vec<StreamPart> = self
            .suites
            .iter()
            .map(|s| {
                (
                    Arc::clone(&s.context),
                    Arc::clone(&s.inline),
                    s.loaded.streamed.clone(),
                )
            })
            .collect();
        let chain = Arc::clone(&self.converters);
        let seed = self.seed;
        let strategy = self.strategy.clone();
        // The run's strategy first (it decides whether the turns are written now or by an
        // attacker), then the turns as sent: each case's own converters, then the run's,
        // seeded per case.
        let convert = move |mut pc: PlannedCase| {
            if let Some(s) = &strategy
                && let Some(c) = with_strategy(&pc.case, s)
            {
                pc.case = Arc::new(c);
            }
            match crate::converters::convert_case(&pc.case, &chain, seed) {
                Some(c) => PlannedCase {
                    suite: pc.suite,
                    case: Arc::new(c),
                },
                None => pc,
            }
        };
        let cases = parts.into_iter().flat_map(move |(ctx, inline, streamed)| {
            let keep_inline = Arc::clone(&keep);
            let keep_streamed = Arc::clone(&keep);
            let ctx_streamed = Arc::clone(&ctx);
            let inline = (0..inline.len()).flat_map(move |i| {
                let ctx = Arc::clone(&ctx);
                with_twin(Arc::clone(&inline[i]), &keep_inline).map(move |case| PlannedCase {
                    suite: Arc::clone(&ctx),
                    case,
                })
            });
            let streamed = streamed.into_iter().flat_map(move |path| {
                let keep = Arc::clone(&keep_streamed);
                let ctx = Arc::clone(&ctx_streamed);
                // The file was checked when the suite loaded; a read failure now (the file
                // was removed mid-run) ends that file's cases, and the integrity check
                // reports it.
                stream_jsonl(&path)
                    .into_iter()
                    .flatten()
                    .filter_map(Result::ok)
                    .flat_map(move |c| with_twin(Arc::new(c), &keep))
                    .map(move |case| PlannedCase {
                        suite: Arc::clone(&ctx),
                        case,
                    })
            });
            inline.chain(streamed)
        });
        cases.map(convert)
    }

    /// Every file the suites were read from (suites, includes, system prompts), to hash
    /// before and after the trials.
    pub fn harness_files(&self) -> Vec<PathBuf> {
        self.suites
            .iter()
            .flat_map(|s| s.loaded.files.iter().cloned())
            .collect()
    }

    /// The suites as the manifest records them.
    pub fn suite_refs(&self) -> Vec<SuiteRef> {
        self.suites
            .iter()
            .map(|s| SuiteRef {
                name: s.loaded.suite.suite.clone(),
                path: s.loaded.origin.clone(),
                sha256: s.loaded.sha256.clone(),
                cases: s.loaded.case_count,
                source: s.loaded.suite.source.clone(),
                canary: s.loaded.suite.agent.canary.clone(),
                case_canaries: s
                    .inline
                    .iter()
                    .map(|c| (c.id.clone(), case_secrets(c)))
                    .filter(|(_, secrets)| !secrets.is_empty())
                    .collect(),
            })
            .collect()
    }

    /// The manifest of a run of this plan.
    pub fn manifest(&self, facts: ManifestFacts) -> RunManifest {
        let mut tool_versions = BTreeMap::new();
        for s in &self.suites {
            for t in &s.loaded.suite.agent.tools {
                tool_versions.insert(
                    t.name.clone(),
                    t.version.clone().unwrap_or_else(|| "unversioned".into()),
                );
            }
        }
        RunManifest {
            schema_version: REPORT_SCHEMA_VERSION,
            run_id: facts.run_id,
            gauntlet_version: facts.gauntlet_version,
            started_at: facts.started_at,
            command: facts.command,
            suites: self.suite_refs(),
            evidence_level: facts.target.evidence_level,
            side_effects: facts.target.side_effects,
            target: facts.target,
            k: facts.k,
            seed: facts.seed,
            planned_cases: self.planned(),
            dataset_revision: crate::builtin::corpus_revision(),
            tool_versions,
            judge: facts.judge,
            judges: Vec::new(),
            filters: self.selection.labels(),
            notes: facts.notes,
            invocation: facts.invocation,
            packs: Some(self.packs.clone()),
            shard: self.selection.shard.map(|s| ShardOf {
                index: s.index,
                total: s.total,
                run: facts.shard_run,
            }),
            prices: None,
        }
    }
}

/// The context a suite's cases run in: the run's canary over the suite's, the system prompt
/// (its canary is put in per case), the run's time limit over the suite's.
pub fn suite_context(s: &LoadedSuite, settings: &PlanSettings<'_>) -> SuiteContext {
    let canary = settings
        .canary
        .map(str::to_owned)
        .or_else(|| s.suite.agent.canary.clone());
    SuiteContext {
        name: s.suite.suite.clone(),
        system_prompt: s.system_prompt.clone(),
        canary,
        prompts: s.prompts.clone(),
        tools: s.suite.agent.tools.clone(),
        tool_backends: Default::default(),
        message_bus: s.suite.agent.message_bus,
        default_blocking: s.suite.defaults.blocking,
        timeout_ms: settings.timeout_ms.or(s.suite.defaults.timeout_ms),
        blocked_is_defended: settings.blocked_is_defended || s.suite.defaults.blocked_is_defended,
        dir: s.dir.clone(),
    }
}

/// The pack requirements of a set of suites: the union of their required packs, and the
/// refusal pack waived only when every tool-using suite waives it.
pub fn pack_requirements(suites: &[LoadedSuite]) -> PackRequirements {
    let mut packs = PackRequirements::default();
    let mut tool_suites = 0;
    let mut waived = 0;
    for su in suites {
        for p in &su.suite.packs.required {
            if !packs.required.contains(p) {
                packs.required.push(p.clone());
            }
        }
        if !su.suite.agent.tools.is_empty() {
            tool_suites += 1;
            if su.suite.packs.no_refusal_pack {
                waived += 1;
            }
        }
    }
    packs.tool_agent = tool_suites > 0;
    packs.no_refusal_pack = tool_suites > 0 && waived == tool_suites;
    packs
}

/// The secrets a case names for itself: its `canary:` and the secret of each of its
/// `no_canary: SECRET` checks, each once, in that order.
fn case_secrets(c: &Case) -> Vec<String> {
    let named = c.expect.iter().filter_map(|e| match &e.oracle {
        Oracle::NoCanary(NoCanaryCheck { canary }) => canary.as_ref(),
        _ => None,
    });
    let mut out: Vec<String> = Vec::new();
    for secret in c.canary.iter().chain(named) {
        if !out.contains(secret) {
            out.push(secret.clone());
        }
    }
    out
}
