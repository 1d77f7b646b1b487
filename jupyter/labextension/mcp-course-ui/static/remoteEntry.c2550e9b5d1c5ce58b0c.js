/* mcp-course-ui: the course's JupyterLab extension. nbgrader's Validate button and Create Assignment sidebar
 * belong to assignments (notebooks with a cell nbgrader marks); on a lesson they mean nothing, so there the
 * button is hidden and the sidebar is not offered. A prebuilt (module-federation) extension in plain
 * JavaScript, so the course needs no JavaScript build: JupyterLab loads this file, calls init() with its
 * shared modules, then get("./extension") for the plugin. */
var _JUPYTERLAB;
(function () {
  "use strict";

  var NAME = "mcp-course-ui";
  var CREATE_ASSIGNMENT = "nbgrader-create_assignemnt"; // the sidebar's widget id, as nbgrader spells it
  var OPEN_CREATE_ASSIGNMENT = "nbgrader:open-create-assignment"; // nbgrader's menu and palette command
  var LESSON = "mcp-course-lesson"; // class of a notebook panel that is not an assignment
  var STYLE = "." + LESSON + " .jp-Toolbar .validate-button { display: none; }";
  var shareScope = null;

  // The newest 4.x version of a package JupyterLab shares, so tokens are the very objects the app uses.
  function shared(name) {
    var versions = shareScope && shareScope[name];
    if (!versions) {
      return Promise.reject(new Error(NAME + ": JupyterLab does not share " + name));
    }
    var newest = Object.keys(versions)
      .filter(function (v) { return /^4\./.test(v); })
      .sort(function (a, b) {
        var x = a.split(/[.-]/).map(Number), y = b.split(/[.-]/).map(Number);
        for (var i = 0; i < 3; i++) { if (x[i] !== y[i]) { return x[i] - y[i]; } }
        return 0;
      })
      .pop();
    if (!newest) {
      return Promise.reject(new Error(NAME + ": no 4.x version of " + name + " is shared"));
    }
    var entry = versions[newest];
    entry.loaded = 1;
    return Promise.resolve(entry.get()).then(function (factory) { return factory(); });
  }

  function isAssignment(model) {
    if (!model) { return false; }
    for (var i = 0; i < model.cells.length; i++) {
      if (model.cells.get(i).getMetadata("nbgrader")) { return true; }
    }
    return false;
  }

  function plugin(INotebookTracker, ILabShell) {
    return {
      id: NAME + ":nbgrader-tools",
      description: "Shows nbgrader's Validate button and Create Assignment sidebar on assignments only.",
      autoStart: true,
      requires: [INotebookTracker],
      optional: [ILabShell],
      activate: function (app, tracker, labShell) {
        var style = document.createElement("style");
        style.textContent = STYLE;
        document.head.appendChild(style);

        var asked = new WeakSet(); // notebooks the instructor opened Create Assignment for, from its menu item
        var sidebar = null;

        function currentNotebook() {
          var widget = labShell ? labShell.currentWidget : tracker.currentWidget;
          return widget && tracker.has(widget) ? widget : null;
        }

        function offerSidebar() {
          if (!labShell || !sidebar) { return; }
          var panel = currentNotebook();
          var wanted = !!panel && (isAssignment(panel.model) || asked.has(panel));
          var present = !!sidebar.parent;
          if (wanted && !present) {
            labShell.add(sidebar, "right");
          } else if (!wanted && present) {
            sidebar.parent = null;
          }
        }

        // Watch each notebook: its class says lesson or assignment, for the button's rule and the sidebar.
        app.docRegistry.addWidgetExtension("Notebook", {
          createNew: function (panel, context) {
            var watched = new WeakSet();
            function update() {
              var model = context.model;
              for (var i = 0; i < model.cells.length; i++) {
                var cell = model.cells.get(i);
                if (!watched.has(cell)) {
                  watched.add(cell);
                  cell.metadataChanged.connect(update);
                }
              }
              panel.toggleClass(LESSON, !isAssignment(model));
              offerSidebar();
            }
            panel.addClass(LESSON);
            context.ready.then(function () {
              if (panel.isDisposed) { return; }
              context.model.cells.changed.connect(update);
              update();
            });
          }
        });

        app.restored.then(function () {
          if (!labShell) { return; }
          for (var widget of labShell.widgets("right")) {
            if (widget.id === CREATE_ASSIGNMENT) { sidebar = widget; }
          }
          if (!sidebar) { return; } // nbgrader's create-assignment plugin is switched off here
          labShell.currentChanged.connect(offerSidebar);
          tracker.currentChanged.connect(offerSidebar);
          app.commands.commandExecuted.connect(function (_, call) {
            var panel = currentNotebook();
            if (call.id !== OPEN_CREATE_ASSIGNMENT || !panel) { return; }
            asked.add(panel);
            offerSidebar();
            labShell.activateById(CREATE_ASSIGNMENT);
          });
          offerSidebar();
        });
      }
    };
  }

  function extension() {
    return Promise.all([shared("@jupyterlab/notebook"), shared("@jupyterlab/application")]).then(function (m) {
      var module = { __esModule: true, "default": [plugin(m[0].INotebookTracker, m[1].ILabShell)] };
      return function () { return module; };
    });
  }

  var container = {
    init: function (scope) { shareScope = scope; },
    get: function (module) {
      if (module === "./extension") { return extension(); }
      return Promise.reject(new Error('Module "' + module + '" does not exist in container.'));
    }
  };
  _JUPYTERLAB = _JUPYTERLAB === undefined ? {} : _JUPYTERLAB;
  _JUPYTERLAB[NAME] = container;
})();
