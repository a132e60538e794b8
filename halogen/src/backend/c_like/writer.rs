//! The text of one C function as it is printed: lines at an indentation, and the
//! identifiers declared in its open blocks.

use super::names::Namer;

/// One C function's text and the names visible at the point being printed.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    /// The text printed so far.
    pub out: String,
    /// The current indentation, in levels of four spaces.
    pub indent: usize,
    /// The identifiers declared in the open blocks.
    pub namer: Namer,
    /// The levels of IR in the expression text being printed (see
    /// [`super::printer::nested`]).
    pub levels: usize,
}

impl Writer {
    /// An empty function body whose lines start at `indent` levels.
    pub fn new(indent: usize) -> Writer {
        Writer { out: String::new(), indent, namer: Namer::new(), levels: 0 }
    }

    /// Prints one line at the current indentation.
    pub fn line(&mut self, text: impl AsRef<str>) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text.as_ref());
        self.out.push('\n');
    }

    /// Prints `text`, which opens a C block, and enters the block.
    pub fn open(&mut self, text: impl AsRef<str>) {
        self.line(text);
        self.indent += 1;
        self.namer.open();
    }

    /// Leaves the innermost block and prints `text`, which closes it.
    pub fn close(&mut self, text: impl AsRef<str>) {
        self.namer.close();
        self.indent -= 1;
        self.line(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_indent_and_scope_names() {
        let mut w = Writer::new(1);
        w.open("if (c) {");
        let inner = w.namer.fresh("t");
        w.line(format!("int {inner} = 0;"));
        w.close("}");
        assert_eq!(w.namer.fresh("t"), "t");
        assert_eq!(w.out, "    if (c) {\n        int t = 0;\n    }\n");
    }
}
