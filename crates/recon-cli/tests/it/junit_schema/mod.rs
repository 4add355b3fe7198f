//! Validates JUnit XML against `testdata/schemas/junit-10.xsd` (the Jenkins
//! xUnit plugin's schema) without network or a system XML library.
//!
//! No maintained pure-Rust XSD validator exists, so this reads the vendored
//! schema itself and enforces what it declares, for the XSD constructs that
//! schema uses: global elements, `ref`s, sequences and choices with
//! minOccurs/maxOccurs, `mixed` content, `xs:string` elements, required and
//! optional attributes (an undeclared attribute is an error, as XSD has no
//! `anyAttribute` here) and `xs:pattern` simple types. Any other construct
//! in the schema is refused (a panic), so a schema this code does not
//! understand can never pass silently.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use quick_xml::events::Event;

/// An element of a parsed document: its attributes in order, its child
/// elements and its text (character data, CDATA and references resolved).
#[derive(Debug, Clone)]
pub struct Element {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Element>,
    pub text: String,
}

impl Element {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    pub fn all(&self, name: &str) -> Vec<&Element> {
        self.children.iter().filter(|c| c.name == name).collect()
    }
}

/// Parses a whole document into its root element.
pub fn parse(xml: &str) -> Result<Element, String> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut stack: Vec<Element> = Vec::new();
    let mut root = None;
    let open = |e: &quick_xml::events::BytesStart| -> Result<Element, String> {
        let mut attrs = Vec::new();
        for a in e.attributes() {
            let a = a.map_err(|e| e.to_string())?;
            let key = String::from_utf8_lossy(a.key.as_ref()).into_owned();
            let value = a.unescape_value().map_err(|e| e.to_string())?.into_owned();
            attrs.push((key, value));
        }
        Ok(Element {
            name: String::from_utf8_lossy(e.name().as_ref()).into_owned(),
            attrs,
            children: Vec::new(),
            text: String::new(),
        })
    };
    let text = |stack: &mut Vec<Element>, t: &str| -> Result<(), String> {
        match stack.last_mut() {
            Some(top) => {
                top.text.push_str(t);
                Ok(())
            }
            None if t.trim().is_empty() => Ok(()),
            None => Err(format!("text outside the root element: {t:?}")),
        }
    };
    let close = |stack: &mut Vec<Element>, root: &mut Option<Element>, el: Element| match stack
        .last_mut()
    {
        Some(parent) => parent.children.push(el),
        None if root.is_none() => *root = Some(el),
        None => {}
    };
    loop {
        match reader.read_event().map_err(|e| e.to_string())? {
            Event::Start(e) => stack.push(open(&e)?),
            Event::Empty(e) => {
                let el = open(&e)?;
                close(&mut stack, &mut root, el);
            }
            Event::End(_) => {
                let el = stack.pop().ok_or("an end tag without a start")?;
                close(&mut stack, &mut root, el);
            }
            Event::Text(t) => text(&mut stack, &t.decode().map_err(|e| e.to_string())?)?,
            Event::CData(t) => text(&mut stack, &t.decode().map_err(|e| e.to_string())?)?,
            Event::GeneralRef(r) => {
                let resolved = match r.resolve_char_ref().map_err(|e| e.to_string())? {
                    Some(c) => c.to_string(),
                    None => {
                        let name = r.decode().map_err(|e| e.to_string())?;
                        quick_xml::escape::resolve_predefined_entity(&name)
                            .ok_or(format!("unknown entity &{name};"))?
                            .to_string()
                    }
                };
                text(&mut stack, &resolved)?
            }
            Event::Decl(_) | Event::Comment(_) | Event::PI(_) => {}
            Event::DocType(_) => return Err("a DOCTYPE (not expected in JUnit XML)".into()),
            Event::Eof => break,
        }
    }
    if !stack.is_empty() {
        return Err(format!(
            "unclosed element <{}>",
            stack[stack.len() - 1].name
        ));
    }
    root.ok_or_else(|| "no root element".into())
}

/// How many times a particle may occur.
#[derive(Debug, Clone, Copy)]
struct Occurs {
    min: usize,
    max: Option<usize>,
}

/// A content model: the children an element may have, in XSD terms.
#[derive(Debug, Clone)]
enum Particle {
    Element(String, Occurs),
    Sequence(Vec<Particle>, Occurs),
    Choice(Vec<Particle>, Occurs),
}

/// What an element may hold.
#[derive(Debug, Clone)]
enum Content {
    /// `type="xs:string"`: text only, no attributes, no child elements.
    Text,
    /// A complex type: attributes, child elements per `particle` (none
    /// when absent), and text only if `mixed`.
    Complex {
        mixed: bool,
        particle: Option<Particle>,
        /// Attribute name → (required, type name).
        attributes: BTreeMap<String, (bool, String)>,
    },
}

/// The rules of a schema: its global elements and its pattern types.
pub struct Schema {
    elements: BTreeMap<String, Content>,
    /// Simple type name → its `xs:pattern`, anchored.
    patterns: BTreeMap<String, regex::Regex>,
}

const XS: &str = "xs:";

/// Marks a locally declared element in a content model (its rules are not
/// a global element's).
const LOCAL: &str = "\0local";

fn xs(el: &Element, local: &str) -> bool {
    el.name.strip_prefix(XS) == Some(local)
}

fn occurs(el: &Element) -> Occurs {
    let n = |a: &str, d: usize| el.attr(a).map_or(Some(d), |v| v.parse().ok());
    Occurs {
        min: n("minOccurs", 1).expect("minOccurs is a number"),
        max: match el.attr("maxOccurs") {
            Some("unbounded") => None,
            _ => Some(n("maxOccurs", 1).expect("maxOccurs is a number or unbounded")),
        },
    }
}

impl Schema {
    pub fn load(path: &Path) -> Schema {
        let text = std::fs::read_to_string(path).unwrap();
        let root = parse(&text).unwrap();
        assert!(xs(&root, "schema"), "not an XSD: <{}>", root.name);
        let mut named_types: BTreeMap<String, &Element> = BTreeMap::new();
        let mut patterns = BTreeMap::new();
        for item in &root.children {
            let name = item.attr("name").unwrap_or_default().to_string();
            if xs(item, "simpleType") {
                let restriction = item.child("xs:restriction").expect("a restriction");
                assert_eq!(restriction.attr("base"), Some("xs:string"), "{name}");
                assert_eq!(restriction.children.len(), 1, "{name}: one facet");
                let pattern = restriction
                    .child("xs:pattern")
                    .expect("an xs:pattern facet");
                let value = pattern.attr("value").unwrap();
                // An XSD pattern matches the whole value.
                patterns.insert(name, regex::Regex::new(&format!("^(?:{value})$")).unwrap());
            } else if xs(item, "complexType") {
                named_types.insert(name, item);
            } else {
                assert!(
                    xs(item, "element"),
                    "unsupported schema item <{}>",
                    item.name
                );
            }
        }
        let mut elements = BTreeMap::new();
        for item in root.children.iter().filter(|i| xs(i, "element")) {
            let name = item.attr("name").expect("a global element has a name");
            let content = match (item.attr("type"), item.child("xs:complexType")) {
                (Some("xs:string"), None) => Content::Text,
                (Some(t), None) => complex(named_types.get(t).expect("a declared type")),
                (None, Some(ct)) => complex(ct),
                other => panic!("unsupported declaration of <{name}>: {other:?}"),
            };
            elements.insert(name.to_string(), content);
        }
        Schema { elements, patterns }
    }

    /// Every way `doc` breaks the schema, each naming the element's path.
    pub fn validate(&self, doc: &Element) -> Vec<String> {
        let mut problems = Vec::new();
        self.check(doc, &doc.name, None, &mut problems);
        problems
    }

    fn check(&self, el: &Element, path: &str, local: Option<&Content>, out: &mut Vec<String>) {
        let Some(content) = local.or_else(|| self.elements.get(&el.name)) else {
            out.push(format!(
                "{path}: <{}> is not declared by the schema",
                el.name
            ));
            return;
        };
        match content {
            Content::Text => {
                for (a, _) in &el.attrs {
                    out.push(format!(
                        "{path}: attribute {a} not allowed (xs:string element)"
                    ));
                }
                if let Some(c) = el.children.first() {
                    out.push(format!("{path}: child <{}> in a text-only element", c.name));
                }
            }
            Content::Complex {
                mixed,
                particle,
                attributes,
            } => {
                for (a, v) in &el.attrs {
                    match attributes.get(a) {
                        None => out.push(format!("{path}: attribute {a} is not declared")),
                        Some((_, ty)) => {
                            if let Err(e) = self.check_type(ty, v) {
                                out.push(format!("{path}: attribute {a}={v:?}: {e}"));
                            }
                        }
                    }
                }
                for (a, (required, _)) in attributes {
                    if *required && el.attr(a).is_none() {
                        out.push(format!("{path}: required attribute {a} is missing"));
                    }
                }
                if !mixed && !el.text.trim().is_empty() {
                    out.push(format!(
                        "{path}: text {:?} in element-only content",
                        el.text
                    ));
                }
                let names: Vec<&str> = el.children.iter().map(|c| c.name.as_str()).collect();
                let fits = match particle {
                    None => names.is_empty(),
                    Some(p) => ends(p, &names, 0).contains(&names.len()),
                };
                if !fits {
                    out.push(format!(
                        "{path}: children {names:?} do not fit the content model {particle:?}"
                    ));
                }
                let locals = particle.as_ref().map(local_elements).unwrap_or_default();
                for (i, c) in el.children.iter().enumerate() {
                    let child_path = format!("{path}/{}[{i}]", c.name);
                    self.check(c, &child_path, locals.get(&c.name), out);
                }
            }
        }
    }

    fn check_type(&self, ty: &str, value: &str) -> Result<(), String> {
        match ty {
            "xs:string" => Ok(()),
            _ => match self.patterns.get(ty) {
                Some(re) if re.is_match(value) => Ok(()),
                Some(re) => Err(format!("does not match {ty} ({re})")),
                None => panic!("unsupported attribute type {ty}"),
            },
        }
    }
}

/// The content of a complex type declaration.
fn complex(ct: &Element) -> Content {
    let mixed = ct.attr("mixed") == Some("true");
    let mut particle = None;
    let mut attributes = BTreeMap::new();
    for item in &ct.children {
        if xs(item, "attribute") {
            let name = item.attr("name").expect("an attribute name").to_string();
            let required = item.attr("use") == Some("required");
            let ty = item.attr("type").expect("an attribute type").to_string();
            attributes.insert(name, (required, ty));
        } else if xs(item, "sequence") || xs(item, "choice") {
            assert!(particle.is_none(), "one content model per type");
            particle = Some(model(item));
        } else {
            panic!("unsupported complexType item <{}>", item.name);
        }
    }
    Content::Complex {
        mixed,
        particle,
        attributes,
    }
}

fn model(el: &Element) -> Particle {
    let items = || el.children.iter().map(model).collect();
    if xs(el, "sequence") {
        Particle::Sequence(items(), occurs(el))
    } else if xs(el, "choice") {
        Particle::Choice(items(), occurs(el))
    } else if xs(el, "element") {
        match (el.attr("ref"), el.attr("name"), el.attr("type")) {
            (Some(r), None, None) => Particle::Element(r.to_string(), occurs(el)),
            // A local element: only xs:string ones occur (rerunType's stackTrace).
            (None, Some(n), Some("xs:string")) => {
                Particle::Element(format!("{n}{LOCAL}"), occurs(el))
            }
            other => panic!("unsupported element particle {other:?}"),
        }
    } else {
        panic!("unsupported particle <{}>", el.name)
    }
}

/// Local element declarations of a content model, by name.
fn local_elements(p: &Particle) -> BTreeMap<String, Content> {
    let mut out = BTreeMap::new();
    let mut walk = vec![p];
    while let Some(p) = walk.pop() {
        match p {
            Particle::Element(n, _) => {
                if let Some(name) = n.strip_suffix(LOCAL) {
                    out.insert(name.to_string(), Content::Text);
                }
            }
            Particle::Sequence(items, _) | Particle::Choice(items, _) => walk.extend(items),
        }
    }
    out
}

/// Every position at which `p` can end when matched against `names` from
/// `start` (a set, since choices and repetitions may end in several places).
fn ends(p: &Particle, names: &[&str], start: usize) -> BTreeSet<usize> {
    let occurs = match p {
        Particle::Element(_, o) | Particle::Sequence(_, o) | Particle::Choice(_, o) => *o,
    };
    // A match with more than min + len(names) repetitions repeats some
    // that consume nothing; leaving those out ends in the same places.
    let enough = occurs.min + names.len();
    let limit = occurs.max.map_or(enough, |m| m.min(enough));
    let mut reached = BTreeSet::new();
    let mut frontier = BTreeSet::from([start]);
    for count in 0..=limit {
        if count >= occurs.min {
            reached.extend(&frontier);
        }
        if count == limit || frontier.is_empty() {
            break;
        }
        frontier = frontier.iter().flat_map(|&at| once(p, names, at)).collect();
    }
    reached
}

/// Where one occurrence of `p` can end, matched from `at`.
fn once(p: &Particle, names: &[&str], at: usize) -> BTreeSet<usize> {
    match p {
        Particle::Element(name, _) => {
            let name = name.strip_suffix(LOCAL).unwrap_or(name);
            names
                .get(at)
                .filter(|n| **n == name)
                .map(|_| at + 1)
                .into_iter()
                .collect()
        }
        Particle::Sequence(items, _) => items.iter().fold(BTreeSet::from([at]), |here, item| {
            here.iter().flat_map(|&h| ends(item, names, h)).collect()
        }),
        Particle::Choice(items, _) => items.iter().flat_map(|i| ends(i, names, at)).collect(),
    }
}
