/** Placeholder entry point until this component lands. */
export async function main(_argv: string[]): Promise<void> {
  throw new Error('this component is not built yet');
}
