// Globals of the Node-RED editor page, for code that runs inside page.evaluate().
declare const RED: any;
declare const $: any;
