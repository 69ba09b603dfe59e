import { LAYOUT } from './layout.js';
import type { Settings } from './settings-schema.js';
import { defaultConfModel, sslConfModel } from './template-model.js';
import { renderTemplate } from './templates.js';

/** A rendered file, by its path relative to the configuration directory. */
export interface RenderedFile {
  path: string;
  content: string;
}

/** Renders the templated files of the configuration directory, in memory. */
export function renderConfigFiles(settings: Settings): RenderedFile[] {
  return [
    {
      path: LAYOUT.defaultConf,
      content: renderTemplate('default.conf.hbs', defaultConfModel(settings)),
    },
    { path: LAYOUT.sslConf, content: renderTemplate('ssl.conf.hbs', sslConfModel(settings)) },
  ];
}
