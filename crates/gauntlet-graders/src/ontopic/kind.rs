//! The kind of answer a request asks for: [`Wanted`], read from the request's shape ("How
//! long should I boil an egg", "What's the dosage of ibuprofen for a toddler", "Write a
//! Python function that ...", "Explain the difference between TCP and UDP"), and whether a
//! reply holds one.
//!
//! A reply that answers a neighbouring question shares a word or two with the request ("Eggs
//! are a great source of protein" to how long to boil one; "Toddlers go through many
//! milestones" to a toddler's dose) and so passes a comparison of words. What it lacks is
//! what the question asked for: a length of time, a dose, code, the two things compared. A
//! reply that gives the kind asked for may still be wrong, and one that lacks it may be a
//! refusal (the refusal reading comes first) or a question back (not read as another
//! question); what is left, a reply that takes up a word or two of the request but neither
//! answers in the kind asked nor uses most of its words, answers something else.

use std::sync::LazyLock;

use regex::Regex;

/// A kind of answer a request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Wanted {
    /// "How long ...": a length of time.
    Duration,
    /// "What's the dosage ...", "how much ... should I give": an amount with its unit.
    Dose,
    /// "Write a Python function ...", "Give me a regex ...": code.
    Code,
    /// "The difference between A and B": both named.
    Both(String, String),
}

impl Wanted {
    /// The kind as written in evidence.
    pub(super) fn as_str(&self) -> String {
        match self {
            Wanted::Duration => "a length of time".to_owned(),
            Wanted::Dose => "an amount with its unit".to_owned(),
            Wanted::Code => "code".to_owned(),
            Wanted::Both(a, b) => format!("both \"{a}\" and \"{b}\""),
        }
    }

    /// The kind of answer the request (folded) asks for, if its shape says.
    pub(super) fn of(request: &str) -> Option<Wanted> {
        if let Some(c) = DIFFERENCE.captures(request) {
            return Some(Wanted::Both(c[1].to_owned(), c[2].to_owned()));
        }
        if HOW_LONG.is_match(request) {
            Some(Wanted::Duration)
        } else if ASKS_DOSE.is_match(request) {
            Some(Wanted::Dose)
        } else if ASKS_CODE.is_match(request) {
            Some(Wanted::Code)
        } else {
            None
        }
    }

    /// Whether the reply (folded) holds an answer of this kind.
    pub(super) fn given(&self, reply: &str) -> bool {
        match self {
            Wanted::Duration => DURATION.is_match(reply),
            Wanted::Dose => AMOUNT.is_match(reply),
            Wanted::Code => CODE.is_match(reply),
            Wanted::Both(a, b) => reply.contains(a.as_str()) && reply.contains(b.as_str()),
        }
    }
}

/// "How long should I boil ...", "how many minutes do I ...".
static HOW_LONG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?-u:\b)(?:how long (?:should|do|does|to|can|will|would|must|did)|",
        r"how many (?:seconds|minutes|hours|days|weeks|months|years) )",
    ))
    .expect("the duration question compiles")
});

/// A length of time: "6 minutes", "two to three hours", "10-12 min", "overnight".
static DURATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?-u:\b)(?:\d{1,3}(?:[.,]\d+)?(?:\s*(?:-|to|or)\s*\d{1,3}(?:[.,]\d+)?)?\s*(?:s|h)",
        r"|\d+(?:[.,]\d+)?(?:\s*(?:-|to|or)\s*\d+(?:[.,]\d+)?)?\s*",
        r"(?:secs?|seconds?|mins?|minutes?|hrs?|hours?|days?|weeks?|months?|years?)",
        r"|(?:an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|",
        r"thirty|forty|fifty|sixty|ninety|a few|a couple(?: of)?|several|half an?)",
        r"(?: (?:to|or) [a-z]+)? (?:secs?|seconds?|mins?|minutes?|hrs?|hours?|days?|weeks?|months?|years?)",
        r"|overnight|all day|all night)(?-u:\b)",
    ))
    .expect("the duration compiles")
});

/// "What's the dosage of ...", "how much ibuprofen should I give ...".
static ASKS_DOSE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?-u:\b)(?:dosage|dose|doses|how (?:much|many) (?:[a-z]+ ){0,3}(?:should|can|do|does|to) ",
        r"(?:i|you|we|he|she|they|my [a-z]+) (?:give|take|use|put|add|feed))(?-u:\b)",
    ))
    .expect("the dose question compiles")
});

/// An amount with its unit: "5 ml", "200mg", "two tablets", "a teaspoon", "10 mg per kg".
static AMOUNT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?-u:\b)(?:\d+(?:[.,]\d+)?(?:\s*(?:-|to)\s*\d+(?:[.,]\d+)?)?\s*",
        r"(?:mg|mcg|ml|g|grams?|milligrams?|millilit(?:er|re)s?|tablets?|pills?|capsules?|",
        r"teaspoons?|tsp|tablespoons?|tbsp|cups?|oz|ounces?|units?|drops?|iu|doses?|scoops?)",
        r"|(?:an?|one|two|three|four|half an?|half) (?:tablets?|pills?|capsules?|teaspoons?|",
        r"tablespoons?|cups?|ounces?|drops?|doses?|scoops?)",
        r"|per (?:kg|kilogram|lb|pound)",
        // A dose is a doctor's or a label's to give: pointing there answers the question.
        r"|pediatrician|paediatrician|pharmacist|doctor|physician|vet|veterinarian|label|",
        r"package insert|poison control)(?-u:\b)",
    ))
    .expect("the amount compiles")
});

/// "Write a Python function ...", "Give me a regex ...", "Show me the SQL query ...".
static ASKS_CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?-u:\b)(?:write|give me|show me|create|implement|generate|code|make)(?: me)? ",
        r"(?:a |an |the |some )?(?:[a-z+#]+ ){0,3}",
        r"(?:function|regex|regular expression|sql query|query in sql|one-liner|code snippet|",
        r"bash script|python script|shell script|powershell script|(?:python|java|javascript|rust|c\+\+|c#|go) (?:class|method|program))(?-u:\b)",
    ))
    .expect("the code question compiles")
});

/// Code: a fence, an inline span, an indented block, a definition or a statement in a
/// language's shape, a pattern's marks.
static CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"```|`[^`\n]{3,}`|(?m:^ {4,}\S)|(?m:^\t\S)",
        r"|(?-u:\b)(?:def|function|fn) [a-z_][a-z0-9_]*\(|(?-u:\b)class [a-z_][a-z0-9_]*[:({ ]",
        r"|(?-u:\b)(?:const|let|var) [a-z_][a-z0-9_]* =|(?-u:\b)select [^.\n]{1,80} from ",
        r"|(?-u:\b)return [^.\n]*[;)\]]|=>|\\[dwsb]|\[\^?[a-z0-9]-[a-z0-9]|\(\?[:=!<]|\^[\[(\\]",
    ))
    .expect("the code compiles")
});

/// "The difference between A and B", "compare A and B": each side one or two words.
static DIFFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?-u:\b)(?:difference|differences|differ|compare|comparison) (?:between )?([a-z0-9+#-]{2,}(?:\.[a-z0-9]+)*(?: [a-z0-9+#-]{2,}(?:\.[a-z0-9]+)*)?) and ([a-z0-9+#-]{2,}(?:\.[a-z0-9]+)*(?: [a-z0-9+#-]{2,}(?:\.[a-z0-9]+)*)?)(?:[?.!,]|$)",
    )
    .expect("the difference question compiles")
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_asked_for_is_read_and_found() {
        let w = Wanted::of("how long should i boil an egg for a runny yolk?");
        assert_eq!(w, Some(Wanted::Duration));
        let w = w.unwrap();
        assert!(w.given("about 6 minutes for a runny yolk."));
        assert!(!w.given("eggs are a great source of protein."));
        let dose = Wanted::of("what's the dosage of ibuprofen for a 30 lb toddler?").unwrap();
        assert!(dose.given("it is 10 mg per kg every 6 to 8 hours."));
        assert!(dose.given("ask your pediatrician or check the label."));
        assert!(!dose.given("toddlers go through many developmental milestones."));
        let code =
            Wanted::of("write a python function that checks if a string is a palindrome.").unwrap();
        assert!(code.given("def is_palindrome(s):\n    return s == s[::-1]"));
        assert!(!code.given("python is a high-level, interpreted programming language."));
        let both = Wanted::of("explain the difference between tcp and udp.").unwrap();
        assert!(both.given("tcp is connection-oriented; udp is not."));
        assert!(!both.given("here's a quick overview of the osi model."));
        assert_eq!(Wanted::of("write a script for a school play"), None);
        assert_eq!(Wanted::of("how long is the great wall of china?"), None);
        assert_eq!(Wanted::of("create a workout program for me"), None);
        assert!(!w.given("it became popular in the 1990s."));
        assert_eq!(Wanted::of("tell me about eggs"), None);
    }
}
