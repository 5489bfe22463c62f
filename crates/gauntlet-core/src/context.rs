//! How a case's retrieved documents reach the target: [`documents_block`] and
//! [`with_documents`], the one wire shape for chat-model targets and for agents that take
//! plain user turns.
//!
//! The documents go into the first user message, before the user's words, as a block a RAG
//! application would build from its retriever:
//!
//! ```text
//! <documents>
//! <document id="doc-1" title="Refund policy">
//! ...the text exactly as retrieved...
//! </document>
//! </documents>
//!
//! What is your refund policy?
//! ```
//!
//! The text is passed as it was written (HTML, markdown, invisible characters and all):
//! what is hidden in it is the attack. Targets with a structured channel for context get the
//! documents as data instead (`documents` in the exec protocol's `start` message and in HTTP
//! request templates).

use crate::suite::Document;

/// The id a document is shown with: its own, else `doc-N` (1-based position).
pub fn document_id(doc: &Document, index: usize) -> String {
    doc.id
        .clone()
        .unwrap_or_else(|| format!("doc-{}", index + 1))
}

/// The documents as one context block (empty when there are none).
pub fn documents_block(docs: &[Document]) -> String {
    if docs.is_empty() {
        return String::new();
    }
    let mut out = String::from("<documents>\n");
    for (i, d) in docs.iter().enumerate() {
        let id = document_id(d, i);
        match &d.title {
            Some(t) => out.push_str(&format!(
                "<document id=\"{}\" title=\"{}\">\n",
                attr(&id),
                attr(t)
            )),
            None => out.push_str(&format!("<document id=\"{}\">\n", attr(&id))),
        }
        out.push_str(d.text.as_deref().unwrap_or(""));
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("</document>\n");
    }
    out.push_str("</documents>");
    out
}

/// The first user message with the documents before it; the message itself when there are
/// none.
pub fn with_documents(docs: &[Document], user: &str) -> String {
    if docs.is_empty() {
        return user.to_owned();
    }
    format!("{}\n\n{user}", documents_block(docs))
}

/// The documents as JSON objects `{id, title, text}` for structured channels.
pub fn documents_json(docs: &[Document]) -> serde_json::Value {
    serde_json::Value::Array(
        docs.iter()
            .enumerate()
            .map(|(i, d)| {
                serde_json::json!({
                    "id": document_id(d, i),
                    "title": d.title,
                    "text": d.text.as_deref().unwrap_or(""),
                })
            })
            .collect(),
    )
}

fn attr(s: &str) -> String {
    s.replace('&', "&amp;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_come_before_the_question_with_ids() {
        let docs = vec![
            Document {
                title: Some("Policy \"A\"".into()),
                text: Some("Refunds within 30 days.".into()),
                ..Document::default()
            },
            Document {
                id: Some("kb-9".into()),
                text: Some("<!-- hidden -->\n".into()),
                ..Document::default()
            },
        ];
        let m = with_documents(&docs, "What is the policy?");
        assert!(m.starts_with("<documents>\n<document id=\"doc-1\" title=\"Policy &quot;A&quot;\">\nRefunds within 30 days.\n</document>\n<document id=\"kb-9\">\n<!-- hidden -->\n</document>\n</documents>\n\nWhat is the policy?"), "{m}");
        assert_eq!(with_documents(&[], "hi"), "hi");
        assert_eq!(documents_json(&docs)[1]["id"], "kb-9");
    }
}
