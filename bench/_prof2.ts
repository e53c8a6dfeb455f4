import { Document, HeadingLevel, Packer, Paragraph, TextRun } from "docx";
import { extractDocx } from "../packages/shared/src/extract/docx.ts";
const children = [];
for (let i = 0; i < 3000; i++) { children.push(new Paragraph({ children: [new TextRun({ text: "hello world this is a sentence of prose. ".repeat(3), bold: i % 3 == 0 }), new TextRun("more text here and there. ")] })); if (i % 20 == 0) children.push(new Paragraph({ text: "Heading", heading: HeadingLevel.HEADING_1 })); }
const docx = new Uint8Array(await Packer.toBuffer(new Document({ sections: [{ children }] })));
const s = performance.now(); for (let i = 0; i < 100; i++) extractDocx(docx); console.log((performance.now() - s) / 100);
