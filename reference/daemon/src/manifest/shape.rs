//! The verb table's result shorthand (`{pane,cols,screen:[string],exit_code?}`) as a
//! typed [`Shape`], so the MCP server's output schemas come from the same string the
//! docs print. The grammar is the one the table uses, and nothing looser:
//!
//! ```text
//! result := object (" or " object)*
//! object := "{" [field ("," field)*] "}"
//! field  := "…" | name ["?"] [":" value]      … = more fields than listed
//! value  := object | "[" value "]" | "string" | "true" | "\"" form "\""
//! name   := [a-z_][a-z0-9_]*
//! ```
//!
//! A field without a value carries some JSON value the verb's docs describe (an id, a
//! count, a nested record); the shorthand does not type it, so neither does the shape.
//! A streaming verb's shorthand (`… then event lines`) is not a result shape.

/// What one JSON value of a result looks like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// Untyped by the shorthand: any JSON value.
    Any,
    /// `string`, or a quoted form such as `"right@resource"` (the form is kept).
    String(Option<&'static str>),
    /// The literal `true`.
    True,
    Array(Box<Shape>),
    Object(ObjectShape),
    /// `{…} or {…}`: exactly one of the alternatives.
    OneOf(Vec<ObjectShape>),
}

/// An object's listed fields; `open` when the shorthand says `…` (more may follow).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectShape {
    pub fields: Vec<FieldShape>,
    pub open: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldShape {
    pub name: &'static str,
    /// `name?`: the field may be absent.
    pub optional: bool,
    pub shape: Shape,
}

/// The shorthand does not follow the grammar; `at` is the byte offset of the problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeError {
    pub at: usize,
}

const MORE: &str = "…";
const OR: &str = " or ";

/// Parses a whole result shorthand.
pub fn parse(text: &'static str) -> Result<Shape, ShapeError> {
    let mut p = Parser { text, at: 0 };
    let mut alternatives = vec![p.object()?];
    while p.eat(OR) {
        alternatives.push(p.object()?);
    }
    if p.at != text.len() {
        return Err(p.error());
    }
    Ok(match alternatives.len() {
        1 => Shape::Object(alternatives.remove(0)),
        _ => Shape::OneOf(alternatives),
    })
}

struct Parser {
    text: &'static str,
    at: usize,
}

impl Parser {
    fn rest(&self) -> &'static str {
        &self.text[self.at..]
    }

    fn error(&self) -> ShapeError {
        ShapeError { at: self.at }
    }

    fn eat(&mut self, token: &str) -> bool {
        let found = self.rest().starts_with(token);
        if found {
            self.at += token.len();
        }
        found
    }

    fn expect(&mut self, token: &str) -> Result<(), ShapeError> {
        match self.eat(token) {
            true => Ok(()),
            false => Err(self.error()),
        }
    }

    fn object(&mut self) -> Result<ObjectShape, ShapeError> {
        self.expect("{")?;
        let mut object = ObjectShape {
            fields: Vec::new(),
            open: false,
        };
        if self.eat("}") {
            return Ok(object);
        }
        loop {
            if object.open {
                // `…` closes the list: nothing is listed after "and more".
                return Err(self.error());
            }
            if self.eat(MORE) {
                object.open = true;
            } else {
                let field = self.field()?;
                if object.fields.iter().any(|f| f.name == field.name) {
                    return Err(self.error());
                }
                object.fields.push(field);
            }
            if self.eat("}") {
                return Ok(object);
            }
            self.expect(",")?;
        }
    }

    fn field(&mut self) -> Result<FieldShape, ShapeError> {
        let name = self.name()?;
        let optional = self.eat("?");
        let shape = match self.eat(":") {
            true => self.value()?,
            false => Shape::Any,
        };
        Ok(FieldShape {
            name,
            optional,
            shape,
        })
    }

    fn name(&mut self) -> Result<&'static str, ShapeError> {
        let rest = self.rest();
        let len = rest
            .bytes()
            .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_')
            .count();
        if len == 0 || rest.as_bytes()[0].is_ascii_digit() {
            return Err(self.error());
        }
        self.at += len;
        Ok(&rest[..len])
    }

    fn value(&mut self) -> Result<Shape, ShapeError> {
        if self.rest().starts_with('{') {
            return self.object().map(Shape::Object);
        }
        if self.eat("[") {
            let item = self.value()?;
            self.expect("]")?;
            return Ok(Shape::Array(Box::new(item)));
        }
        if self.eat("string") {
            return Ok(Shape::String(None));
        }
        if self.eat("true") {
            return Ok(Shape::True);
        }
        if self.eat("\"") {
            let rest = self.rest();
            let len = rest.find('"').ok_or_else(|| self.error())?;
            if len == 0 {
                return Err(self.error());
            }
            self.at += len + 1;
            return Ok(Shape::String(Some(&rest[..len])));
        }
        Err(self.error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::VERBS;

    fn field(name: &'static str, optional: bool, shape: Shape) -> FieldShape {
        FieldShape {
            name,
            optional,
            shape,
        }
    }

    fn closed(fields: Vec<FieldShape>) -> ObjectShape {
        ObjectShape {
            fields,
            open: false,
        }
    }

    #[test]
    fn every_answered_verb_has_a_parseable_result() {
        for verb in VERBS.iter().filter(|v| !v.streaming()) {
            assert!(
                parse(verb.result).is_ok(),
                "{}: {:?} in {:?}",
                verb.name,
                parse(verb.result),
                verb.result
            );
        }
    }

    #[test]
    fn fields_arrays_literals_and_nesting() {
        assert_eq!(parse("{}"), Ok(Shape::Object(closed(vec![]))));
        assert_eq!(
            parse("{pane,exit_code?,screen:[string],valid:true}"),
            Ok(Shape::Object(closed(vec![
                field("pane", false, Shape::Any),
                field("exit_code", true, Shape::Any),
                field("screen", false, Shape::Array(Box::new(Shape::String(None)))),
                field("valid", false, Shape::True),
            ])))
        );
        assert_eq!(
            parse("{grants:[\"right@resource\"],snap?:{a,…}}"),
            Ok(Shape::Object(closed(vec![
                field(
                    "grants",
                    false,
                    Shape::Array(Box::new(Shape::String(Some("right@resource"))))
                ),
                field(
                    "snap",
                    true,
                    Shape::Object(ObjectShape {
                        fields: vec![field("a", false, Shape::Any)],
                        open: true,
                    })
                ),
            ])))
        );
        assert_eq!(
            parse("{config} or {key,value}"),
            Ok(Shape::OneOf(vec![
                closed(vec![field("config", false, Shape::Any)]),
                closed(vec![
                    field("key", false, Shape::Any),
                    field("value", false, Shape::Any)
                ]),
            ]))
        );
    }

    #[test]
    fn malformed_shorthand_is_refused_where_it_goes_wrong() {
        for (text, at) in [
            ("", 0),
            ("{", 1),
            ("{a", 2),
            ("{a,}", 3),
            ("{a,a}", 4),
            ("{A}", 1),
            ("{1a}", 1),
            ("{a:[string}", 10),
            ("{a:number}", 3),
            ("{a:\"\"}", 4),
            ("{…,a}", 5),
            ("{a} then event lines", 3),
            ("{a} or", 3),
            ("[string]", 0),
        ] {
            assert_eq!(parse(text), Err(ShapeError { at }), "{text:?}");
        }
    }
}
