/** Where a chunk comes from, for a client to cite: page, sheet or slide, and the headings above it. */
export interface Citation {
  page?: number;
  sheet?: string;
  slide?: number;
  headingPath?: string[];
}
