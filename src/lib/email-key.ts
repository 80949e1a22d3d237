import { domainToASCII } from 'node:url';

const ASCII = /^[\x00-\x7f]*$/;

/**
 * The form in which addresses are compared and de-duplicated: trimmed, lower-cased, and the
 * domain in its IDNA ASCII form, so `user@bücher.example` and `user@xn--bcher-kva.example`
 * are one address. The local part is only lower-cased (its meaning is the receiving
 * server's). An ASCII domain is only lower-cased, so keys stored before stay valid; a domain
 * IDNA refuses keeps its lower-cased spelling.
 */
export function emailKey(email: string): string {
  const address = email.trim().toLowerCase();
  const at = address.lastIndexOf('@');
  if (at < 0) return address;
  const domain = address.slice(at + 1);
  if (ASCII.test(domain)) return address;
  return `${address.slice(0, at)}@${domainToASCII(domain) || domain}`;
}
