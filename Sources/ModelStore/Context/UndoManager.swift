import Foundation

#if !canImport(Darwin)
    /// Foundation's `UndoManager`, which Foundation on Linux does not have, with the same shape, so
    /// that `context.undoManager = UndoManager()` and the calls around it compile on every platform.
    /// On Apple platforms ModelStore uses Foundation's own.
    ///
    /// It keeps a stack of undo groups and one of redo groups. Each group holds the actions
    /// registered while it was open, and ``undo()`` runs the newest group's actions newest first.
    /// What they register while undoing becomes a redo group, and ``redo()`` runs that in turn. A
    /// registration outside an undo or redo clears the redo stack, as in Foundation.
    ///
    /// With ``groupsByEvent`` (the default), a registration made when no group is open opens
    /// one, which stays open until ``endUndoGrouping()``, ``undo()``, or a ``ModelContext`` that
    /// uses this manager processes its pending changes (which ``ModelContext/save()`` and the
    /// main context's autosave do): the changes made in one turn of an app form one group, as
    /// Foundation's run-loop events do. Use it from one thread or actor at a time, as Foundation's.
    public final class UndoManager {
        private typealias Action = () -> Void

        private var undoStack: [[Action]] = []
        private var redoStack: [[Action]] = []
        /// The actions of the open top-level group, if one is open.
        private var openGroup: [Action]?
        /// Whether the open group was opened by a registration (``groupsByEvent``) rather than by
        /// ``beginUndoGrouping()``.
        private var openedAutomatically = false

        /// Whether a registration outside any group opens one by itself. `true` by default.
        public var groupsByEvent = true
        /// How many undo groups are kept (the oldest go first); 0 keeps every one.
        public var levelsOfUndo = 0 {
            didSet { trim() }
        }
        /// How deeply ``beginUndoGrouping()`` calls are nested now.
        public private(set) var groupingLevel = 0
        /// Whether ``undo()`` is running its actions.
        public private(set) var isUndoing = false
        /// Whether ``redo()`` is running its actions.
        public private(set) var isRedoing = false
        /// The name of the newest undo group's action, for a menu ("Undo Rename"); empty if unset.
        public private(set) var undoActionName = ""

        /// A manager with empty stacks.
        public init() {}

        /// Whether ``undo()`` has a group to undo (an open group counts once it holds an action).
        public var canUndo: Bool { !undoStack.isEmpty || !(openGroup?.isEmpty ?? true) }
        /// Whether ``redo()`` has a group to redo.
        public var canRedo: Bool { !redoStack.isEmpty }

        /// Opens a group; groups nest, and only the outermost becomes one step of undo.
        public func beginUndoGrouping() {
            if groupingLevel == 0 {
                if openedAutomatically { closeOpenGroup() }
                openGroup = []
            }
            groupingLevel += 1
        }

        /// Closes the group ``beginUndoGrouping()`` opened (and a group a registration opened, when
        /// none is nested).
        public func endUndoGrouping() {
            if openedAutomatically && groupingLevel == 0 { return closeOpenGroup() }
            precondition(groupingLevel > 0, "endUndoGrouping() without beginUndoGrouping()")
            groupingLevel -= 1
            if groupingLevel == 0 { closeOpenGroup() }
        }

        /// Records how to undo a change: `handler` is called with `target` when the group holding
        /// it is undone (or redone, for a registration made while undoing).
        public func registerUndo<Target: AnyObject>(withTarget target: Target, handler: @escaping (Target) -> Void) {
            let action: Action = { handler(target) }
            if isUndoing || isRedoing {
                openGroup?.append(action)
                return
            }
            redoStack.removeAll()
            if openGroup == nil {
                guard groupsByEvent else {
                    undoStack.append([action])
                    return trim()
                }
                openGroup = []
                openedAutomatically = true
            }
            openGroup?.append(action)
        }

        /// Names the newest group's action.
        public func setActionName(_ name: String) { undoActionName = name }

        /// Undoes the newest group (closing a group a registration opened first); its actions'
        /// registrations form a redo group.
        public func undo() {
            if openedAutomatically { closeOpenGroup() }
            precondition(groupingLevel == 0, "undo() inside an open undo group")
            guard let group = undoStack.popLast() else { return }
            isUndoing = true
            defer { isUndoing = false }
            if let redo = replay(group) { redoStack.append(redo) }
        }

        /// Redoes the newest undone group; its actions' registrations form an undo group again.
        public func redo() {
            precondition(groupingLevel == 0, "redo() inside an open undo group")
            guard let group = redoStack.popLast() else { return }
            isRedoing = true
            defer { isRedoing = false }
            if let undo = replay(group) {
                undoStack.append(undo)
                trim()
            }
        }

        /// Runs a group's actions newest first; returns what they registered, if anything.
        private func replay(_ group: [Action]) -> [Action]? {
            openGroup = []
            defer { openGroup = nil }
            for action in group.reversed() { action() }
            return openGroup?.isEmpty == false ? openGroup : nil
        }

        /// Forgets every undo and redo group.
        public func removeAllActions() {
            undoStack.removeAll()
            redoStack.removeAll()
            openGroup = nil
            openedAutomatically = false
            groupingLevel = 0
        }

        /// Ends the group a registration opened, if one is open: what a context calls at the end
        /// of a turn of changes.
        func endAutomaticGroup() {
            if openedAutomatically && groupingLevel == 0 { closeOpenGroup() }
        }

        private func closeOpenGroup() {
            if let group = openGroup, !group.isEmpty { undoStack.append(group) }
            openGroup = nil
            openedAutomatically = false
            trim()
        }

        private func trim() {
            if levelsOfUndo > 0 && undoStack.count > levelsOfUndo {
                undoStack.removeFirst(undoStack.count - levelsOfUndo)
            }
        }
    }
#endif
