//! C syntax shared by every C dialect: operator symbols, parentheses, and literals that
//! read back as exactly the IR's constants.

use super::types::scalar_c;
use crate::ir::{BinOp, CmpOp, Type, TypeCode};

/// The C operator of `+`, `-`, `*` and `/`.
pub(crate) fn arith_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        _ => "/",
    }
}

/// The C operator of `&`, `|` and `^`.
pub(crate) fn bit_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::BitAnd => "&",
        BinOp::BitOr => "|",
        _ => "^",
    }
}

/// The C operator of a comparison.
pub(crate) fn cmp_symbol(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::Ne => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

/// The C operator of the 64-bit index arithmetic `+`, `-` and `*`.
pub(crate) fn index_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        _ => "*",
    }
}

/// `s` without one pair of enclosing parentheses, where they enclose all of it.
pub(crate) fn strip_parens(s: &str) -> &str {
    if !(s.starts_with('(') && s.ends_with(')')) {
        return s;
    }
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 && i != s.len() - 1 {
                    return s;
                }
            }
            _ => {}
        }
    }
    &s[1..s.len() - 1]
}

/// `s` in parentheses unless it already is one parenthesized whole.
pub(crate) fn paren(s: &str) -> String {
    if strip_parens(s).len() != s.len() {
        s.to_string()
    } else {
        format!("({s})")
    }
}

/// A C literal of the integer type `t` with the value `v` (already wrapped to `t`):
/// negative values are parenthesized, narrow types cast.
pub(crate) fn int_literal(t: Type, v: i64) -> String {
    match (t.code, t.bits) {
        (TypeCode::Bool, _) => (if v != 0 { "true" } else { "false" }).to_string(),
        (TypeCode::Int, 32) if v == i32::MIN as i64 => "(-2147483647 - 1)".to_string(),
        (TypeCode::Int, 32) if v < 0 => format!("({v})"),
        (TypeCode::Int, 32) => v.to_string(),
        (TypeCode::Int, 64) if v == i64::MIN => "(-9223372036854775807ll - 1)".to_string(),
        (TypeCode::Int, 64) => format!("((int64_t){v}ll)"),
        (TypeCode::UInt, 64) => format!("{}ull", v as u64),
        (TypeCode::UInt, 32) => format!("{}u", v as u64 as u32),
        _ => format!("(({}){v})", scalar_c(t)),
    }
}

/// A C literal of the float type `t` that reads back as exactly `v`.
pub(crate) fn float_literal(t: Type, v: f64) -> String {
    if t.bits == 32 {
        let f = v as f32;
        if !f.is_finite() {
            return format!("h_from_bits_f32(0x{:08x}u)", f.to_bits());
        }
        // Debug prints the shortest text that reads back as the same f32.
        let s = format!("{f:?}f");
        if f.is_sign_negative() {
            format!("({s})")
        } else {
            s
        }
    } else {
        if !v.is_finite() {
            return format!("h_from_bits_f64(0x{:016x}ull)", v.to_bits());
        }
        let s = format!("{v:?}");
        if v.is_sign_negative() {
            format!("({s})")
        } else {
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(int_literal(Type::i32(), -3), "(-3)");
        assert_eq!(int_literal(Type::i32(), i32::MIN as i64), "(-2147483647 - 1)");
        assert_eq!(int_literal(Type::u8(), 200), "((uint8_t)200)");
        assert_eq!(int_literal(Type::u64(), -1), "18446744073709551615ull");
        assert_eq!(int_literal(Type::u32(), 0xffff_ffff), "4294967295u");
        assert_eq!(int_literal(Type::bool(), 1), "true");
        assert_eq!(float_literal(Type::f32(), 0.1f32 as f64), "0.1f");
        assert_eq!(float_literal(Type::f32(), -2.5), "(-2.5f)");
        assert_eq!(float_literal(Type::f64(), 1e300), "1e300");
        assert_eq!(float_literal(Type::f32(), f64::INFINITY), "h_from_bits_f32(0x7f800000u)");
    }

    #[test]
    fn parentheses() {
        assert_eq!(strip_parens("(a + b)"), "a + b");
        assert_eq!(strip_parens("(a) + (b)"), "(a) + (b)");
        assert_eq!(strip_parens("f(a)"), "f(a)");
        assert_eq!(paren("a"), "(a)");
        assert_eq!(paren("(a < b)"), "(a < b)");
        assert_eq!(paren("(a) && (b)"), "((a) && (b))");
    }
}
