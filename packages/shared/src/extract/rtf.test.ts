import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { extractRtf } from "./rtf.ts";
import { ExtractionError } from "../errors.ts";

const rtf = (source: string) => new TextEncoder().encode(source);
const text = (source: string) => extractRtf(rtf(source)).text;

describe("extractRtf", () => {
  it("reads a plain document and skips the header's tables", () => {
    const source = String.raw`{\rtf1\ansi\deff0{\fonttbl{\f0\fswiss Helvetica;}{\f1\froman Times;}}
{\colortbl;\red255\green0\blue0;}{\stylesheet{\s0 Normal;}}{\info{\title Secret title}{\author Ann}}
\pard\plain Hello, {\b world}!\par
Second \i paragraph\i0 .\par
}`;
    expect(extractRtf(rtf(source))).toEqual({
      text: "Hello, world!\nSecond paragraph.",
      sections: [{ start: 0, end: 31 }],
    });
  });

  it("decodes \\'hh escapes with the document's code page", () => {
    expect(text(String.raw`{\rtf1\ansi\ansicpg1252 Caf\'e9, \'c0 bient\'f4t \'80\par}`)).toBe("Café, À bientôt €");
    expect(text(String.raw`{\rtf1\ansi\ansicpg1251 \'cf\'f0\'e8\'e2\'e5\'f2}`)).toBe("Привет");
    expect(text(String.raw`{\rtf1\ansi\ansicpg932 \'82\'a0\'82\'a2}`)).toBe("あい");
  });

  it("decodes \\'hh escapes with a font's charset (WordPad's Cyrillic)", () => {
    const source = String.raw`{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\fnil\fcharset0 Arial;}{\f1\fnil\fcharset204 Arial CYR;}}
\f1 \'cf\'f0\'e8\'e2\'e5\'f2 \f0 caf\'e9\par}`;
    expect(text(source)).toBe("Привет café");
  });

  it("reads \\uN characters and skips their \\ucN fallbacks", () => {
    expect(text(String.raw`{\rtf1\ansi 5 \u8364? and \u8220\'93quoted\u8221\'94}`)).toBe("5 € and “quoted”");
    expect(text(String.raw`{\rtf1\ansi\uc2 \u26085\'93\'fa\u26412\'96\'7b}`)).toBe("日本");
    expect(text(String.raw`{\rtf1\ansi\uc0 \u1055\u1088\u1080}`)).toBe("При");
    expect(text(String.raw`{\rtf1 \u-10179?\u-8704? smile}`)).toBe("😀 smile");
    expect(text(String.raw`{\rtf1 {\uc3 \u1055 abc}d}`)).toBe("Пd"); // \ucN is scoped to its group
  });

  it("follows nested groups and skips destinations", () => {
    const source = String.raw`{\rtf1 A{B{\i C}D}E{\*\unknowndest hidden}{\pict\wmetafile8 0123abcd}{\header Page 1}{\footer Footer}F {\field{\*\fldinst HYPERLINK "http://example.com"}{\fldrslt link}}{\*\shppict{\pict 00ff}}{\nonshppict{\pict 00ff}}}`;
    expect(text(source)).toBe("ABCDEF link");
  });

  it("turns paragraph, line, tab, table and special-character words into text", () => {
    const source = String.raw`{\rtf1 one\line two\tab three\par
\trowd\cellx1000\cellx2000 a\cell b\cell\row
x\~y \emdash\endash \ldblquote q\rdblquote  \lquote s\rquote  \bullet  \\ \{ \} opt\-ion non\_break\par}`;
    expect(text(source)).toBe("one\ntwo\tthree\na | b\nx y —–“q” ‘s’ • \\ { } option non-break");
  });

  it("writes paragraphs with an outline level as Markdown headings", () => {
    const source = String.raw`{\rtf1{\stylesheet{\s1\outlinelevel0 heading 1;}}
\pard\s1\outlinelevel0 {\b Annual} report\par
\pard Body text.\par
\pard\outlinelevel1 Part one\par
\pard More.\par}`;
    expect(text(source)).toBe("# Annual report\nBody text.\n## Part one\nMore.");
  });

  it("reads a document shaped like Word's output", () => {
    const source = String.raw`{\rtf1\adeflang1025\ansi\ansicpg1252\uc1\adeff31507\deff0\stshfdbch31505\deflang1033{\fonttbl{\f0\fbidi \froman\fcharset0\fprq2{\*\panose 02020603050405020304}Times New Roman;}
{\f34\fbidi \froman\fcharset1\fprq2{\*\panose 02040503050406030204}Cambria Math;}}{\colortbl;\red0\green0\blue0;}
{\*\defchp \f31506\fs22 }{\*\defpap \ql \li0\ri0\sa160\sl259\slmult1\widctlpar\itap0 }
{\stylesheet{\ql \li0\ri0\sa160\widctlpar \snext0 \sqformat \spriority0 Normal;}{\s1\ql \li0\sb240\keepn\outlinelevel0\rin0\lin0\itap0 \fs32\cf19 \sbasedon0 \snext0 \slink15 \sqformat \spriority9 heading 1;}}
{\*\rsidtbl \rsid1\rsid2}{\*\mmathPr\mmathFont34\mbrkBin0}{\info{\title T}{\author Jane}{\creatim\yr2024\mo1\dy1\hr10\min0}{\nofpages1}}
{\*\xmlnstbl {\xmlns1 http://schemas.microsoft.com/office/word/2003/wordml}}\paperw12240\paperh15840\margl1440\margr1440\gutter0\ltrsect
\widowctrl\ftnbj\aenddoc{\*\pnseclvl1\pnucrm\pnstart1\pnindent720\pnhang {\pntxta .}}
\pard\plain \ltrpar\s1\ql \li0\sb240\keepn\widctlpar\outlinelevel0\rin0\lin0\itap0\pararsid1 \rtlch\fcs1 \af31503\afs32 \ltrch\fcs0 \fs32\cf19\loch\af31502\hich\af31502 {\rtlch\fcs1 \af31503 \ltrch\fcs0 \insrsid1 \hich\af31502\dbch\af31501\loch\f31502 Quarterly Review}{\rtlch\fcs1 \af31503 \ltrch\fcs0 \insrsid1 \par }
\pard\plain \ltrpar\ql \li0\ri0\sa160\widctlpar\itap0\pararsid1 \rtlch\fcs1 \af31507\afs22 \ltrch\fcs0 \f31506\fs22 {\rtlch\fcs1 \af31507 \ltrch\fcs0 \insrsid1 \hich\af31506\dbch\af31505\loch\f31506 Sales rose by 5\hich\af31506\dbch\af31505\loch\f31506 % in Z\loch\af31506\hich\af31506\dbch\af31505\'fc\loch\f31506 rich.}{\rtlch\fcs1 \af31507 \ltrch\fcs0 \insrsid1 \par }
{\*\themedata 504b030414000600080000002100e9de0fbfff0000001c020000130000005b436f6e74656e745f54797065735d2e786d6c}
{\*\latentstyles\lsdstimax376\lsdlockeddef0 {\lsdlockedexcept \lsdqformat1 \lsdpriority0 \lsdlocked0 Normal;}}}`;
    expect(text(source)).toBe("# Quarterly Review\nSales rose by 5% in Zürich.");
  });

  it("skips \\bin data, braces included", () => {
    expect(text(String.raw`{\rtf1 a{\*\blipuid x}{\pict\bin4 }}}}} b}`)).toBe("a b");
    expect(text(String.raw`{\rtf1 before \bin4 {{{{after}`)).toBe("before after");
  });

  it("tolerates truncated groups, stray braces and unknown words", () => {
    expect(text(String.raw`{\rtf1 Hello {\b world`)).toBe("Hello world");
    expect(text(String.raw`{\rtf1 Hi \foo123 there\'zz!}} trailing text`)).toBe("Hi there!");
    expect(text("{\\rtf1 end\\")).toBe("end");
    expect(text(String.raw`{\rtf1}`)).toBe("");
  });

  it("refuses a file that is not RTF, and absurd nesting, with an ExtractionError", () => {
    expect(() => extractRtf(Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]))).toThrow(new ExtractionError("not an RTF file"));
    expect(() => extractRtf(rtf(`{\\rtf1 ${"{".repeat(100_000)}`))).toThrow(ExtractionError);
  });

  it("never hangs or throws anything but ExtractionError on garbage", () => {
    const token = fc.constantFrom(
      "{",
      "}",
      "\\",
      "\\'",
      "\\u",
      "\\uc",
      "\\bin",
      "\\*",
      "\\par",
      "-",
      "9",
      "e9",
      " ",
      "x",
      "\\fonttbl",
      "\\f",
      "\\fcharset128",
      "\\ansicpg",
    );
    const garbage = fc.oneof(
      fc.array(token, { maxLength: 200 }).map((t) => rtf(`{\\rtf1 ${t.join("")}`)),
      fc.uint8Array({ maxLength: 500 }).map((b) => Uint8Array.from([...rtf("{\\rtf1"), ...b])),
    );
    fc.assert(
      fc.property(garbage, (bytes) => {
        try {
          expect(typeof extractRtf(bytes).text).toBe("string");
        } catch (error) {
          expect(error).toBeInstanceOf(ExtractionError);
        }
      }),
      { numRuns: 500 },
    );
  });
});
