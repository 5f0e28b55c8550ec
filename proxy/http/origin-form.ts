/** The request targets a filter or ext_proc may set as the upstream path: origin-form only. */

const ORIGIN_FORM = /^\/[!-"$-~]*$/;

/** Origin-form: `/` then visible ASCII, no fragment (`#`), no spaces. */
export function isOriginForm(path: string): boolean {
  return ORIGIN_FORM.test(path);
}
