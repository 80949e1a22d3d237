/**
 * API key pairs recently authenticated in this process: public key → the account and its
 * secret's hash, for `lifetimeMs`. A request within that time reads no database; a wrong
 * secret is still refused (compared with the cached hash). Changes made through this process
 * (a rotated secret, new settings) forget the account at once; another process sees them
 * within the lifetime. At most `maxEntries` pairs are kept (the oldest go first).
 */
export class KeyCache<A extends { id: number }> {
  private readonly entries = new Map<string, { account: A; secretHash: string; expiresAt: number }>();

  constructor(
    private readonly lifetimeMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(publicKey: string): { account: A; secretHash: string } | undefined {
    const entry = this.entries.get(publicKey);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(publicKey);
      return undefined;
    }
    return entry;
  }

  set(publicKey: string, account: A, secretHash: string): void {
    if (this.lifetimeMs <= 0) return;
    this.entries.delete(publicKey);
    this.entries.set(publicKey, { account, secretHash, expiresAt: this.now() + this.lifetimeMs });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  forget(publicKey: string): void {
    this.entries.delete(publicKey);
  }

  forgetAccount(id: number): void {
    for (const [key, entry] of this.entries) if (entry.account.id === id) this.entries.delete(key);
  }
}
