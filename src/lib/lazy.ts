/**
 * A value built on first use instead of at start: for modules a role may never need (mail
 * parsing in a worker, HTML-to-text in a web process, the dashboard's views in a worker), so a
 * start loads and keeps only what it uses.
 */
export function lazy<T>(build: () => T): () => T {
  let value: T | undefined;
  let built = false;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value as T;
  };
}
