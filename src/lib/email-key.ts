/** The form in which addresses are compared and de-duplicated. */
export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}
