//! Tokens of a `.halogen` file, each with the line and column it starts at.
//!
//! Newlines end statements, except inside brackets and after a token that cannot end
//! one (a binary operator, a comma, `=`): there a long expression goes on to the next
//! line, as in Python.

use super::{Pos, TextError};

/// One token.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Ident(String),
    Int(i64),
    Float(f64),
    /// Punctuation and operators, by their text (`(`, `+=`, `<<`, ...).
    Punct(&'static str),
    /// The end of a statement.
    Newline,
    Eof,
}

impl std::fmt::Display for Tok {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "'{s}'"),
            Tok::Int(v) => write!(f, "'{v}'"),
            Tok::Float(v) => write!(f, "'{v}'"),
            Tok::Punct(p) => write!(f, "'{p}'"),
            Tok::Newline => write!(f, "the end of the line"),
            Tok::Eof => write!(f, "the end of the file"),
        }
    }
}

/// Longest first, so that `<<=` is never read as `<` `<=`.
const PUNCT: &[&str] = &[
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "(", ")", "[", "]", "{", "}", ",", ":",
    ";", ".", "=", "+", "-", "*", "/", "%", "<", ">", "&", "|", "^", "!", "~",
];

/// Tokens after which a newline does not end the statement.
fn continues(t: &Tok) -> bool {
    matches!(t, Tok::Punct(p) if !matches!(*p, ")" | "]" | "}" | ";"))
}

/// Splits `src` into tokens. Comments run from `#` to the end of the line.
pub(super) fn lex(src: &str) -> Result<Vec<(Tok, Pos)>, TextError> {
    let chars: Vec<char> = src.chars().collect();
    let mut out: Vec<(Tok, Pos)> = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    let mut depth = 0i32;
    while i < chars.len() {
        let c = chars[i];
        let pos = Pos { line, col };
        if c == '\n' {
            let ends = depth == 0 && out.last().is_some_and(|(t, _)| !continues(t) && *t != Tok::Newline);
            if ends {
                out.push((Tok::Newline, pos));
            }
            i += 1;
            line += 1;
            col = 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            col += 1;
            continue;
        }
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((Tok::Ident(chars[start..i].iter().collect()), pos));
        } else if c.is_ascii_digit() {
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let mut float = false;
            // A '.' followed by a digit continues the number (`r.x` is not a number).
            if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
                float = true;
                i += 1;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                let mut j = i + 1;
                if j < chars.len() && (chars[j] == '+' || chars[j] == '-') {
                    j += 1;
                }
                if j < chars.len() && chars[j].is_ascii_digit() {
                    float = true;
                    i = j;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let text: String = chars[start..i].iter().collect();
            let tok = if float {
                Tok::Float(text.parse().map_err(|_| TextError::at(pos, format!("bad number '{text}'")))?)
            } else {
                Tok::Int(
                    text.parse()
                        .map_err(|_| TextError::at(pos, format!("the integer {text} does not fit in 64 bits")))?,
                )
            };
            out.push((tok, pos));
        } else {
            let rest: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            let Some(p) = PUNCT.iter().find(|p| rest.starts_with(**p)) else {
                return Err(TextError::at(pos, format!("unexpected character '{c}'")));
            };
            // Braces hold statements (a schedule's directives): newlines count there.
            match *p {
                "(" | "[" => depth += 1,
                ")" | "]" => depth -= 1,
                _ => {}
            }
            i += p.len();
            out.push((if *p == ";" { Tok::Newline } else { Tok::Punct(p) }, pos));
        }
        col += (i - start) as u32;
    }
    out.push((Tok::Newline, Pos { line, col }));
    out.push((Tok::Eof, Pos { line, col }));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn newlines_end_statements_outside_brackets_and_after_complete_tokens() {
        let t = toks("f(x,\n  y) = a +\n b # note\ng");
        let newlines = t.iter().filter(|t| **t == Tok::Newline).count();
        assert_eq!(newlines, 2, "{t:?}");
        assert_eq!(
            toks("r.x 1.5 2e3 7"),
            [
                Tok::Ident("r".into()),
                Tok::Punct("."),
                Tok::Ident("x".into()),
                Tok::Float(1.5),
                Tok::Float(2000.0),
                Tok::Int(7),
                Tok::Newline,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn positions_and_errors_name_the_line_and_column() {
        let t = lex("a\n  b <= c").unwrap();
        assert_eq!(t[2].1, Pos { line: 2, col: 3 });
        assert_eq!(t[3], (Tok::Punct("<="), Pos { line: 2, col: 5 }));
        let e = lex("x = 3 $ 4").unwrap_err();
        assert_eq!(e.to_string(), "1:7: unexpected character '$'");
    }
}
