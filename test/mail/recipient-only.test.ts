import { withoutRecipientBlocks } from '../../src/mail/recipient-only';

describe('a message for nobody: the blocks only a recipient needs left out', () => {
  test('when a paragraph holds only the preference link (placeholder, Liquid or bare) then the paragraph goes; the rest stays byte for byte', () => {
    const html = '<body><p>Hello ((first_name))!</p>\n<p style="x"><a href="((unsubscribe_preferences))">Unsubscribe</a></p>\n<div> {{ unsubscribe_preferences }} </div><p>((unsubscribe_preferences))</p><p>Bye</p></body>';
    expect(withoutRecipientBlocks(html.replace('((unsubscribe_preferences))">', '{{ unsubscribe_preferences }}">'))).toBe('<body><p>Hello ((first_name))!</p>\n\n<p>Bye</p></body>');
    expect(withoutRecipientBlocks(html)).toBe('<body><p>Hello ((first_name))!</p>\n\n<p>Bye</p></body>');
  });

  test('when the link shares its paragraph with other words or sits in a table cell then only the link goes', () => {
    expect(withoutRecipientBlocks('<p>Sent by Acme · <a href=" (( unsubscribe_preferences )) ">Unsubscribe</a></p>')).toBe('<p>Sent by Acme · </p>');
    expect(withoutRecipientBlocks('<table><tr><td><a href="((unsubscribe_preferences))">Unsubscribe</a></td></tr></table>')).toBe('<table><tr><td></td></tr></table>');
  });

  test('when an element is marked data-recipient-only then it goes whole, with what it holds', () => {
    expect(withoutRecipientBlocks('<div data-recipient-only><p>Sent to ((email))</p><a href="((unsubscribe_preferences))">x</a></div><p>Kept</p>')).toBe('<p>Kept</p>');
  });

  test('when nothing is for a recipient only then the HTML is returned as it was', () => {
    const html = '<p><a href="https://acme.test/((first_name))">Hi</a> ((webview_url))</p>';
    expect(withoutRecipientBlocks(html)).toBe(html);
  });
});
