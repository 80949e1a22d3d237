// The visual editor of the single-send composer and the automation step page (issue 14, point 4).
// GrapesJS with its newsletter preset edits the design; the form keeps working as before: this
// script writes the exported, CSS-inlined HTML into template_html and the editor's project into
// template_json (a hidden field it adds), so the same save route validates and stores them.
// "HTML" shows the textarea itself. Without this script the textarea is the editor.
(() => {
  const root = document.querySelector('[data-designer]');
  if (!root) return;
  const form = root.closest('form');
  const project = root.querySelector('[data-designer-project]');
  const canvas = root.querySelector('[data-designer-canvas]');
  const status = root.querySelector('[data-designer-status]');
  const preview = document.getElementById('live-preview');
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content ?? '';
  const textarea = () => form.querySelector('[name="template_html"]');

  // template_json travels only when this script runs: a design edited without it saves no stale project.
  const json = document.createElement('input');
  json.type = 'hidden';
  json.name = 'template_json';
  json.value = project.value.trim();
  form.append(json);

  let editor;
  let mode = 'visual';
  /** The caret in the text being edited (its component and offset), kept while the focus is elsewhere. */
  let lastCaret;
  /** The design in the canvas differs from the fields (a change not exported yet). */
  let touched = false;
  /** The textarea's text when the HTML mode was entered, to know whether it was edited. */
  let htmlAtSwitch = '';

  const debounce = (fn, ms) => {
    let timer;
    return () => {
      clearTimeout(timer);
      timer = setTimeout(fn, ms);
    };
  };

  /** The export as a whole document: the preset gives the body with its CSS inlined. */
  const exportHtml = () => {
    const inlined = editor.runCommand('gjs-get-inlined-html');
    const head = '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"></head>';
    return /<body[\s>]/i.test(inlined) ? `<!doctype html><html>${head}${inlined}</html>` : `<!doctype html><html>${head}<body>${inlined}</body></html>`;
  };

  /** Where the caret is in an element, as a count of characters before it (or undefined). */
  const caretOffset = (el) => {
    const selection = el.ownerDocument.getSelection();
    if (!selection?.rangeCount || !el.contains(selection.getRangeAt(0).endContainer)) return undefined;
    const range = selection.getRangeAt(0);
    const before = el.ownerDocument.createRange();
    before.selectNodeContents(el);
    before.setEnd(range.endContainer, range.endOffset);
    return before.toString().length;
  };
  /** Puts the caret back after that many characters of the element's text. */
  const placeCaret = (el, offset) => {
    const doc = el.ownerDocument;
    const walker = doc.createTreeWalker(el, 4 /* NodeFilter.SHOW_TEXT */);
    let left = offset;
    let node = walker.nextNode();
    const range = doc.createRange();
    while (node && left > node.data.length) {
      left -= node.data.length;
      node = walker.nextNode();
    }
    if (node) range.setStart(node, left);
    else {
      range.selectNodeContents(el);
      range.collapse(false);
    }
    range.collapse(true);
    doc.getSelection().removeAllRanges();
    doc.getSelection().addRange(range);
  };

  /**
   * The text being typed into is part of the design only once GrapesJS syncs it from the canvas,
   * and a sync redraws the text's nodes: run under the person's keys it would drop keys typed
   * meanwhile and move the caret. So the design is written into the fields when an edit ends
   * (GrapesJS syncs then), and while a text is still being edited only when the page needs the
   * fields now (a save, the switch to HTML).
   */
  let syncing = false;
  const syncEditedText = async () => {
    const editing = editor?.getEditing();
    const view = editing?.syncContent ? editing : editing?.getView?.();
    if (!view?.syncContent) return;
    // Syncing changes the design's model: that change is ours, not the user's.
    syncing = true;
    try {
      await view.syncContent();
    } finally {
      syncing = false;
    }
    touched = true;
  };

  /** Writes the canvas's design into the form's fields. */
  const sync = async () => {
    if (!editor || mode !== 'visual') return;
    await syncEditedText();
    if (!touched) return;
    touched = false;
    const html = exportHtml();
    if (html !== textarea().value) {
      textarea().value = html;
      json.value = JSON.stringify(editor.getProjectData());
      refreshPreview();
    }
  };
  /** The export after a change, once changes pause, and never under the keys of a text being edited. */
  const syncSoon = debounce(() => {
    if (!editor?.getEditing()) sync();
  }, 400);

  /** Loads a design into the canvas without writing the fields (they already hold it). */
  const load = (html, projectJson) => {
    if (!editor) return;
    if (projectJson) {
      editor.loadProjectData(JSON.parse(projectJson));
    } else {
      editor.Css.clear();
      editor.setComponents(html || '');
    }
    editor.clearDirtyCount();
    touched = false;
  };

  const setMode = async (next) => {
    if (next === mode) return;
    if (next === 'html') {
      await sync();
      htmlAtSwitch = textarea().value;
    } else if (textarea().value !== htmlAtSwitch) {
      // The HTML was edited by hand: the editor's project no longer describes it.
      json.value = '';
      load(textarea().value, '');
    }
    mode = next;
    canvas.hidden = next !== 'visual';
    textarea().closest('.field').hidden = next === 'visual';
    for (const button of root.querySelectorAll('[data-designer-mode]')) button.setAttribute('aria-pressed', String(button.dataset.designerMode === next));
    if (next === 'visual') editor?.refresh();
  };

  // The live preview: the form as it is now, rendered for one contact by POST /editor/preview.
  const refreshPreview = debounce(async () => {
    if (!preview) return;
    const body = new URLSearchParams(new FormData(form));
    try {
      const res = await fetch('/editor/preview', { method: 'POST', body, headers: { 'X-CSRF-Token': csrf }, credentials: 'same-origin' });
      preview.innerHTML = res.ok ? await res.text() : `<p class="field-error">${res.status === 404 ? 'That contact is not one of yours.' : 'The preview could not be made.'}</p>`;
    } catch {
      preview.innerHTML = '<p class="field-error">The preview could not be made.</p>';
    }
  }, 500);

  /** The picker's own message line, beside the chips (not at the top of the editor). */
  const pickerNote = root.querySelector('[data-picker-note]');
  const say = (text) => {
    if (!pickerNote) return;
    pickerNote.textContent = text;
    pickerNote.hidden = !text;
  };

  const rememberCaret = () => {
    const editing = editor?.getEditing();
    const el = editing?.getEl?.() ?? editing?.view?.el;
    const offset = el ? caretOffset(el) : undefined;
    // Kept as a count of characters: GrapesJS redraws the text's nodes when it syncs.
    if (offset !== undefined) lastCaret = { component: editing, offset };
  };

  /** Starts editing a text of the canvas (a click or Enter on it), the caret at its end unless one is kept. */
  const editText = async (component) => {
    const view = component.getView?.() ?? component.view;
    if (!view?.onActive) return undefined;
    editor.select(component);
    if (editor.getEditing() !== component) await view.onActive();
    const el = view.el;
    el.focus();
    const doc = el.ownerDocument;
    const range = doc.createRange();
    range.selectNodeContents(el);
    range.collapse(false);
    doc.getSelection().removeAllRanges();
    doc.getSelection().addRange(range);
    return el;
  };

  /**
   * Inserts text (a placeholder, a Liquid snippet) where the caret is: in the HTML textarea, in
   * the canvas text being edited (the caret kept when the chip took the focus), or at the end
   * of the selected text; with nothing to insert into, the picker says what to do.
   */
  const insertText = async (text) => {
    say('');
    if (mode === 'html' || !editor) {
      const field = textarea();
      field.setRangeText(text, field.selectionStart, field.selectionEnd, 'end');
      field.focus();
      field.dispatchEvent(new Event('input', { bubbles: true }));
      return;
    }
    const doc = editor.Canvas.getDocument();
    let editing = editor.getEditing();
    if (!editing) {
      const selected = editor.getSelected();
      if (selected?.isInstanceOf?.('text') && (await editText(selected))) editing = editor.getEditing();
    }
    const el = editing?.getEl?.() ?? editing?.view?.el;
    if (!el) {
      say(`Click into a text of the design (or move to it with Tab and press Enter), then pick ${text} again.`);
      return;
    }
    const kept = lastCaret?.component === editing ? lastCaret.offset : undefined;
    el.focus();
    if (kept !== undefined) placeCaret(el, kept);
    doc.execCommand('insertText', false, text);
    rememberCaret();
    touched = true;
    syncSoon();
  };

  /**
   * A step with no HTML of its own is sent with its design template: the canvas starts from the
   * template's HTML (the fields stay empty until the design is changed).
   */
  const showTemplateDesign = async () => {
    const template = form.querySelector('select[name="template_id"]');
    if (!template || textarea().value.trim() || json.value) return;
    const res = await fetch(`/single-sends/template-body?template_id=${encodeURIComponent(template.value)}`, { credentials: 'same-origin' });
    if (!res.ok) return;
    const html = new DOMParser().parseFromString(await res.text(), 'text/html').querySelector('textarea')?.value ?? '';
    load(html, '');
  };

  // GrapesJS draws its panels (inputs, selects, buttons) inside the canvas, which sits in the
  // form: a control whose `form` names no form belongs to none, so none of them is validated,
  // posted or able to submit the page's form.
  // Its canvas frame gets a name and its scrolling panel a tab stop, for screen readers and keyboards.
  const detach = (node) => {
    if (node.nodeType !== 1) return;
    const within = (selector) => (node.matches(selector) ? [node] : [...node.querySelectorAll(selector)]);
    for (const control of within('input, select, textarea, button')) control.setAttribute('form', 'designer-controls');
    for (const frame of within('iframe')) frame.title = 'The design being edited';
    for (const select of within('#gjs-clm-states')) select.setAttribute('aria-label', 'State of the selected part');
    for (const panel of within('.gjs-pn-views-container')) {
      panel.tabIndex = 0;
      panel.setAttribute('role', 'region');
      panel.setAttribute('aria-label', 'Editor panels: blocks, styles, layers');
    }
  };
  new MutationObserver((records) => {
    for (const record of records) for (const node of record.addedNodes) detach(node);
  }).observe(canvas, { childList: true, subtree: true });

  // GrapesJS draws its controls as icons in spans: each gets the role and name of a button,
  // a tab stop, and Enter/Space (below). Names by the command they run.
  const BUTTON_NAMES = {
    'sw-visibility': 'Show outlines', preview: 'Preview', fullscreen: 'Full screen', 'export-template': 'View code',
    'open-sm': 'Styles', 'open-tm': 'Settings', 'open-layers': 'Layers', 'open-blocks': 'Blocks',
    undo: 'Undo', redo: 'Redo', 'gjs-open-import-template': 'Import HTML', 'gjs-toggle-images': 'Show or hide images', 'canvas-clear': 'Clear the design',
    'set-device-desktop': 'Canvas at desktop width', 'set-device-tablet': 'Canvas at tablet width', 'set-device-mobile': 'Canvas at phone width',
    'core:component-exit': 'Select the part around it', 'tlb-move': 'Drag to move', 'tlb-clone': 'Duplicate', 'tlb-delete': 'Delete',
  };
  const asButton = (el, name) => {
    el.setAttribute('role', 'button');
    el.tabIndex = 0;
    if (name) el.setAttribute('aria-label', name);
  };
  const nameControls = () => {
    for (const panel of editor.Panels.getPanels()) {
      for (const button of panel.buttons ?? panel.get('buttons') ?? []) {
        const attributes = button.get('attributes') ?? {};
        const command = typeof button.get('command') === 'string' ? button.get('command') : '';
        const name = BUTTON_NAMES[button.id] ?? BUTTON_NAMES[command] ?? attributes.title;
        // An empty span (a panel's spacer) stays out of the tab order.
        if (!name) continue;
        button.set('attributes', { ...attributes, title: name, 'aria-label': name, role: 'button', tabindex: '0' });
      }
    }
  };
  // The selected part's toolbar (drawn on each selection) and the text toolbar (bold, link…).
  const nameToolbars = () => {
    const items = [...canvas.querySelectorAll('.gjs-toolbar-item')];
    const commands = (editor.getSelected()?.get('toolbar') ?? []).map((item) => (typeof item.command === 'string' ? item.command : 'core:component-exit'));
    items.forEach((el, i) => asButton(el, BUTTON_NAMES[commands[i]] ?? ''));
    for (const el of canvas.querySelectorAll('.gjs-rte-action')) asButton(el, el.getAttribute('title') ?? el.textContent.trim());
  };
  canvas.addEventListener('keydown', (event) => {
    const control = event.target.closest?.('[role="button"]:not(button)');
    if (!control || (event.key !== 'Enter' && event.key !== ' ')) return;
    event.preventDefault();
    // The selected part's toolbar acts on mousedown, the others on click.
    if (control.classList.contains('gjs-toolbar-item')) control.dispatchEvent(new MouseEvent('mousedown', { bubbles: true, cancelable: true }));
    else control.click();
  });

  /**
   * The canvas by keyboard: every text of the design is a tab stop; Enter edits it (the caret at
   * its end), Escape ends the edit and leaves the focus on it. Only the canvas's elements get
   * the tab stop, never the design (the export reads the components, not the canvas).
   */
  const reachable = (component) => {
    const el = component.getEl?.();
    if (!el || !component.isInstanceOf?.('text') || component.isChildOf?.('text')) return;
    el.tabIndex = 0;
  };
  const keyboardCanvas = () => {
    // The canvas is a document of its own: its language and title, for screen readers.
    const frameDoc = editor.Canvas.getDocument();
    frameDoc.documentElement.lang = document.documentElement.lang || 'en';
    frameDoc.title = 'The design being edited';
    editor.on('component:mount', reachable);
    editor.getWrapper().find('*').forEach(reachable);
    const doc = editor.Canvas.getDocument();
    doc.addEventListener('selectionchange', rememberCaret);
    doc.addEventListener('keydown', async (event) => {
      const editing = editor.getEditing();
      if (event.key === 'Escape' && editing) {
        const el = editing.getEl();
        event.preventDefault();
        await editing.getView?.()?.disableEditing?.();
        el?.focus();
        return;
      }
      if (event.key !== 'Enter' || editing || event.target?.tabIndex !== 0) return;
      const component = event.target.__gjsv?.model;
      if (!component?.isInstanceOf?.('text')) return;
      event.preventDefault();
      await editText(component);
    });
  };

  const narrow = window.matchMedia('(max-width: 699px)');
  const boot = () => {
    const newsletter = window['grapesjs-preset-newsletter'];
    const plugin = newsletter?.default ?? newsletter;
    if (!window.grapesjs || !plugin) {
      status.textContent = 'The visual editor could not be loaded: edit the HTML below.';
      return;
    }
    canvas.hidden = false;
    textarea().closest('.field').hidden = true;
    editor = window.grapesjs.init({
      container: canvas,
      height: '640px',
      width: 'auto',
      fromElement: false,
      storageManager: false,
      // GrapesJS would fetch Font Awesome from a CDN and post telemetry: nothing leaves this machine.
      cssIcons: '',
      telemetry: false,
      assetManager: { upload: false },
      parser: { optionsHtml: { allowScripts: false, allowUnsafeAttr: false } },
      plugins: [plugin],
      // The focus on a text of the canvas shows (the canvas is a frame with its own styles).
      canvasCss: '[tabindex="0"]:focus-visible { outline: 3px solid #4338ca !important; outline-offset: 2px; }',
      pluginsOpts: {
        [plugin]: {
          // Grid and list items point at an image on a placeholder service.
          blocks: ['sect100', 'sect50', 'sect30', 'sect37', 'button', 'divider', 'text', 'text-sect', 'image', 'quote', 'link', 'link-block'],
          inlineCss: true,
        },
      },
    });
    nameControls();
    editor.on('component:toggled', () => requestAnimationFrame(nameToolbars));
    editor.on('rte:enable', () => requestAnimationFrame(nameToolbars));
    editor.on('load', async () => {
      keyboardCanvas();
      nameToolbars();
      load(textarea().value, json.value);
      await showTemplateDesign();
      status.hidden = true;
      // A body refused when saved (a Liquid error names a line of its HTML) opens as HTML, its
      // message beside it; nothing was touched yet, so the switch exports nothing over it.
      if (textarea().closest('.field').classList.contains('invalid')) await setMode('html');
      // A phone: the note above says the visual editor needs a wider screen; the HTML is shown.
      else if (narrow.matches) await setMode('html');
      editor.on('update', () => {
        if (editor.getDirtyCount() === 0 || syncing) return;
        touched = true;
        syncSoon();
      });
      editor.on('component:input', () => {
        touched = true;
        syncSoon();
      });
      // The edit ended: GrapesJS syncs the text, and the design goes into the fields.
      editor.on('rte:disable', () => {
        touched = true;
        syncSoon();
      });
    });
  };

  root.addEventListener('mousedown', (event) => {
    // A placeholder button must not take the focus (and the text cursor) from the canvas, nor
    // reach GrapesJS, which ends the text's editing on any mousedown in the page.
    if (event.target.closest('[data-insert]')) {
      event.preventDefault();
      event.stopPropagation();
    }
  });
  root.addEventListener('click', (event) => {
    const modeButton = event.target.closest('[data-designer-mode]');
    if (modeButton) setMode(modeButton.dataset.designerMode);
    const chip = event.target.closest('[data-insert]');
    if (chip) insertText(chip.dataset.insert);
    const save = event.target.closest('[data-save-template]');
    if (save) {
      event.preventDefault();
      saveAsTemplate();
    }
  });

  // "Save as template" keeps the page: only its message comes back.
  const saveAsTemplate = async () => {
    await sync();
    const body = new URLSearchParams({ _csrf: csrf, template_name: form.querySelector('[name="template_name"]').value, template_html: textarea().value, template_json: json.value });
    const target = document.getElementById('own-template-status');
    const res = await fetch('/my-templates', {
      method: 'POST',
      body,
      credentials: 'same-origin',
      headers: { 'X-CSRF-Token': csrf, 'HX-Request': 'true', 'HX-Request-Type': 'partial', 'HX-Target': '#own-template-status' },
    });
    target.innerHTML = await res.text();
  };

  // One of the account's templates, loaded into the editor and the fields.
  root.querySelector('[data-own-template]')?.addEventListener('change', async (event) => {
    if (!event.target.value) return;
    const res = await fetch(`/my-templates/${encodeURIComponent(event.target.value)}/design`, { credentials: 'same-origin' });
    if (!res.ok) return;
    const design = await res.json();
    textarea().value = design.template_html;
    json.value = design.template_json ?? '';
    htmlAtSwitch = textarea().value;
    load(design.template_html, design.template_json);
    refreshPreview();
  });

  // A stock template picked in the composer: htmx puts its HTML in a new textarea; load it.
  document.addEventListener('htmx:after:swap', () => {
    const field = textarea();
    if (!field || field.dataset.loaded === 'yes') return;
    field.dataset.loaded = 'yes';
    json.value = '';
    htmlAtSwitch = field.value;
    field.closest('.field').hidden = mode === 'visual' && Boolean(editor);
    load(field.value, '');
    refreshPreview();
  });

  form.addEventListener('input', (event) => {
    if (event.target === textarea()) touched = false;
    refreshPreview();
  });
  form.addEventListener('change', (event) => {
    if (event.target.matches('select[name="template_id"]')) showTemplateDesign();
    refreshPreview();
  });
  // A save while a text is being typed into (or an export still waiting) first writes the design.
  // (The browser validated the form before this event; the submit buttons carry no value.)
  form.addEventListener('submit', (event) => {
    if (!editor || mode !== 'visual' || !(touched || editor.getEditing())) return;
    event.preventDefault();
    touched = true;
    sync().then(() => HTMLFormElement.prototype.submit.call(form));
  });
  for (const button of document.querySelectorAll('[data-preview-width]')) {
    button.addEventListener('click', () => {
      preview.dataset.width = button.dataset.previewWidth;
      for (const other of document.querySelectorAll('[data-preview-width]')) other.setAttribute('aria-pressed', String(other === button));
    });
  }

  textarea().dataset.loaded = 'yes';
  boot();
  refreshPreview();
})();
