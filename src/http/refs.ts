// References inside the contract (local `$ref`s only: the contract is one file).

/** `node` itself, or what its (local) `$ref` chain points to. */
export function resolved(spec: Record<string, any>, node: any): any {
  while (node && typeof node.$ref === 'string') {
    node = node.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((at: any, part: string) => at?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
  }
  return node;
}
