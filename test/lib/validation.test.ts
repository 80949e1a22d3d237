import { hasControlCharacters, isEmail } from '../../src/lib/validation';

describe('address and text checks', () => {
  test('when an address holds a control character in its local part or domain then it is not an email', () => {
    expect(isEmail('ann@example.com')).toBe(true);
    for (const c of ['\u0000', '\u0001', '\u0008', '\u001b', '\u001f', '\u007f']) {
      expect({ c, local: isEmail(`an${c}n@example.com`), domain: isEmail(`ann@exa${c}mple.com`) }).toEqual({ c, local: false, domain: false });
    }
  });

  test('when a text holds C0 control characters then they are found, but TAB, CR and LF are text', () => {
    expect(hasControlCharacters('one\ttwo\r\nthree')).toBe(false);
    expect(hasControlCharacters('Zoë 李 \u007f')).toBe(false);
    for (const c of ['\u0000', '\u0007', '\u000b', '\u000c', '\u001b', '\u001f']) expect({ c, found: hasControlCharacters(`a${c}b`) }).toEqual({ c, found: true });
  });
});
