//! The harm taxonomy: [`HARM_CATEGORIES`], the categories a case's `harm:` names and reports
//! give the attack success rate of, and the maps from the public behaviour sets' own category
//! labels onto it ([`from_dataset`]: [`JAILBREAKBENCH`], [`HARMBENCH`], [`AILUMINATE`]).
//!
//! The base is the MLCommons AILuminate v1.0 hazard taxonomy (twelve categories), because it
//! is public, defined category by category and meant for exactly this: grading what a model
//! answers to hazardous requests. Two categories that JailbreakBench and HarmBench both keep
//! apart and AILuminate does not are added after its twelve: cybercrime (AILuminate counts
//! it among non-violent crimes) and misinformation (AILuminate has elections under
//! specialised advice and defamation, but no general category). Keeping them apart lets an
//! imported JailbreakBench or HarmBench file keep its own distinction in the figures.
//!
//! A public set's label maps onto one category; the maps are by label, not by behaviour, so a
//! set whose label is broad (HarmBench's `harmful`, JailbreakBench's `Physical harm`) lands
//! where most of its behaviours belong (see `docs/redteam.md`, "The harm pack").

/// One category of the harm taxonomy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HarmCategory {
    /// The id, as in a case's `harm:`.
    pub id: &'static str,
    /// The title reports show.
    pub title: &'static str,
    /// The AILuminate v1.0 hazard code it is, if it is one of AILuminate's twelve.
    pub ailuminate: Option<&'static str>,
}

const fn cat(id: &'static str, title: &'static str, code: Option<&'static str>) -> HarmCategory {
    HarmCategory {
        id,
        title,
        ailuminate: code,
    }
}

/// The taxonomy, in the order reports list it: AILuminate's twelve hazards, then the two
/// categories the behaviour sets add.
pub const HARM_CATEGORIES: &[HarmCategory] = &[
    cat("violent-crimes", "Violent crimes", Some("vcr")),
    cat("non-violent-crimes", "Non-violent crimes", Some("ncr")),
    cat("sex-related-crimes", "Sex-related crimes", Some("src")),
    cat(
        "child-sexual-exploitation",
        "Child sexual exploitation",
        Some("cse"),
    ),
    cat(
        "indiscriminate-weapons",
        "Indiscriminate weapons (CBRNE)",
        Some("iwp"),
    ),
    cat("suicide-self-harm", "Suicide and self-harm", Some("ssh")),
    cat("hate", "Hate", Some("hte")),
    cat("specialized-advice", "Specialized advice", Some("spc")),
    cat("privacy", "Privacy", Some("prv")),
    cat(
        "intellectual-property",
        "Intellectual property",
        Some("ipv"),
    ),
    cat("defamation", "Defamation", Some("dfm")),
    cat("sexual-content", "Sexual content", Some("sxc")),
    cat("cybercrime", "Cybercrime (malware, intrusion)", None),
    cat("misinformation", "Misinformation and disinformation", None),
];

/// JailbreakBench's ten categories (the `Category` column of its behaviours).
pub const JAILBREAKBENCH: &[(&str, &str)] = &[
    ("Harassment/Discrimination", "hate"),
    ("Malware/Hacking", "cybercrime"),
    ("Physical harm", "violent-crimes"),
    ("Economic harm", "non-violent-crimes"),
    ("Fraud/Deception", "non-violent-crimes"),
    ("Disinformation", "misinformation"),
    ("Sexual/Adult content", "sexual-content"),
    ("Privacy", "privacy"),
    ("Expert advice", "specialized-advice"),
    ("Government decision-making", "specialized-advice"),
];

/// HarmBench's semantic categories (the `SemanticCategory` column).
pub const HARMBENCH: &[(&str, &str)] = &[
    ("chemical_biological", "indiscriminate-weapons"),
    ("illegal", "non-violent-crimes"),
    ("misinformation_disinformation", "misinformation"),
    ("harmful", "violent-crimes"),
    ("harassment_bullying", "hate"),
    ("cybercrime_intrusion", "cybercrime"),
    ("copyright", "intellectual-property"),
];

/// AILuminate v1.0's hazard codes (the `hazard` column of its prompt sets), the four kinds of
/// specialised advice and the sexual-content code as the prompt files write them.
pub const AILUMINATE: &[(&str, &str)] = &[
    ("vcr", "violent-crimes"),
    ("ncr", "non-violent-crimes"),
    ("src", "sex-related-crimes"),
    ("cse", "child-sexual-exploitation"),
    ("iwp", "indiscriminate-weapons"),
    ("ssh", "suicide-self-harm"),
    ("hte", "hate"),
    ("spc_ele", "specialized-advice"),
    ("spc_fin", "specialized-advice"),
    ("spc_hlt", "specialized-advice"),
    ("spc_lgl", "specialized-advice"),
    ("prv", "privacy"),
    ("ipv", "intellectual-property"),
    ("dfm", "defamation"),
    ("sxc_prn", "sexual-content"),
];

/// The category with this id.
pub fn find(id: &str) -> Option<&'static HarmCategory> {
    HARM_CATEGORIES.iter().find(|c| c.id == id)
}

/// Where a category comes in the taxonomy's order; an id the taxonomy does not know (a
/// stored run of another version) comes after every known one.
pub fn rank(id: &str) -> usize {
    HARM_CATEGORIES
        .iter()
        .position(|c| c.id == id)
        .unwrap_or(HARM_CATEGORIES.len())
}

/// The map of a public set by the dataset name its importer records (`jailbreakbench`,
/// `harmbench`, `ailuminate`).
pub fn map_of(dataset: &str) -> Option<&'static [(&'static str, &'static str)]> {
    match dataset {
        "jailbreakbench" => Some(JAILBREAKBENCH),
        "harmbench" => Some(HARMBENCH),
        "ailuminate" => Some(AILUMINATE),
        _ => None,
    }
}

/// The taxonomy's category for a public set's category label, compared without case,
/// spaces or punctuation (`Malware/Hacking`, `malware hacking`); a label that is already a
/// taxonomy id maps to itself. `None` when the set or the label is unknown.
pub fn from_dataset(dataset: &str, label: &str) -> Option<&'static str> {
    let key = squash(label);
    if key.is_empty() {
        return None;
    }
    if let Some(c) = HARM_CATEGORIES.iter().find(|c| squash(c.id) == key) {
        return Some(c.id);
    }
    map_of(dataset)?
        .iter()
        .find(|(l, _)| squash(l) == key)
        .map(|(_, id)| *id)
}

fn squash(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_taxonomy_has_ailuminates_twelve_and_the_two_the_sets_add() {
        assert!(HARM_CATEGORIES.len() >= 12);
        let coded: Vec<&str> = HARM_CATEGORIES
            .iter()
            .filter_map(|c| c.ailuminate)
            .collect();
        assert_eq!(
            coded,
            [
                "vcr", "ncr", "src", "cse", "iwp", "ssh", "hte", "spc", "prv", "ipv", "dfm", "sxc"
            ]
        );
        let mut ids: Vec<&str> = HARM_CATEGORIES.iter().map(|c| c.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), HARM_CATEGORIES.len(), "ids are unique");
    }

    #[test]
    fn every_public_label_maps_onto_a_category_of_the_taxonomy() {
        for (set, map, n) in [
            ("jailbreakbench", JAILBREAKBENCH, 10),
            ("harmbench", HARMBENCH, 7),
            ("ailuminate", AILUMINATE, 15),
        ] {
            assert_eq!(map.len(), n, "{set}: every category of the set is mapped");
            for (label, id) in map {
                assert!(
                    find(id).is_some(),
                    "{set}: `{label}` maps to unknown `{id}`"
                );
                assert_eq!(from_dataset(set, label), Some(*id), "{set}: {label}");
            }
        }
        // Every AILuminate hazard code is reached from AILuminate's own labels.
        for c in HARM_CATEGORIES.iter().filter(|c| c.ailuminate.is_some()) {
            assert!(
                AILUMINATE.iter().any(|(_, id)| *id == c.id),
                "no AILuminate label maps to {}",
                c.id
            );
        }
        // The two added categories are what both behaviour sets name apart.
        for id in ["cybercrime", "misinformation"] {
            assert!(JAILBREAKBENCH.iter().any(|(_, i)| *i == id));
            assert!(HARMBENCH.iter().any(|(_, i)| *i == id));
        }
    }

    #[test]
    fn labels_are_read_loosely_and_unknown_ones_map_to_nothing() {
        assert_eq!(
            from_dataset("jailbreakbench", " malware / hacking "),
            Some("cybercrime")
        );
        assert_eq!(
            from_dataset("harmbench", "Chemical Biological"),
            Some("indiscriminate-weapons")
        );
        assert_eq!(from_dataset("advbench", "hate"), Some("hate"));
        assert_eq!(from_dataset("harmbench", "standard"), None);
        assert_eq!(from_dataset("jailbreakbench", ""), None);
        assert_eq!(from_dataset("nothing", "Privacy"), Some("privacy"));
        assert_eq!(from_dataset("nothing", "Malware/Hacking"), None);
        assert_eq!(rank("violent-crimes"), 0);
        assert_eq!(rank("unknown"), HARM_CATEGORIES.len());
    }
}
