import type { Citation } from "@docstore/shared";

/** A chunk's citation as the API shows it: only the fields it has, in snake_case. */
export function citationFields(citation: Citation | undefined) {
  return {
    ...(citation?.page !== undefined ? { page: citation.page } : {}),
    ...(citation?.sheet !== undefined ? { sheet: citation.sheet } : {}),
    ...(citation?.slide !== undefined ? { slide: citation.slide } : {}),
    ...(citation?.headingPath ? { heading_path: citation.headingPath } : {}),
  };
}
