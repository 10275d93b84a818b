package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/client"
	"github.com/sluicehq/sluice/internal/resource"
)

// family declares the commands of a collection of the API whose items
// are T and bodies In (types of package apiwire): newFamilyCommand makes
// from it the commands its declaration's operations call for (create,
// list [--all], get, update and delete), with flags that set the fields
// of the body and --data for a whole body, which the API checks. What a
// family does besides is a hook: more flags (body), its own output of
// create (created), more commands (commands).
type family[T, In any] struct {
	// spec is the family's declaration: its path and list key, the
	// operations the API serves (a command for each of create, update and
	// delete it declares; list and get always), and the fields its flags
	// set.
	spec resource.Spec
	// kind is its command's name, plural and the columns of list; its path,
	// list key and cells come from spec and row.
	kind        resourceKind
	short, long string // the help of the family's command
	// row is an item's cells under kind.columns; fields what get, create
	// and update print of it.
	row    func(T) []string
	fields func(T) []resourceField
	// moreFlags set fields of the body of create and update, on --data's,
	// beside the flags of spec's fields (specFlags).
	moreFlags      []fieldFlag
	create, update verbHelp
	// updateFlags names the flags of update for its error when none is
	// given, such as "--description or --metadata".
	updateFlags string
	// body, when set, returns the flags of create and update that set the
	// body in ways a fieldFlag cannot, such as a destination's target.
	body func() bodyHook[T]
	// created, when set, prints what create created instead of its fields
	// or, with quiet (create --quiet), its id.
	created func(stdout, stderr io.Writer, a answer[T], asJSON, quiet bool) error
	// commands, when set, returns the family's other commands.
	commands func(f *resourceFlags) []*cobra.Command
	// parent, for a family nested in another's path, such as the routes
	// of an HTTPS edge, is the flag that gives the parent's id and the
	// collection under that parent, whose path the commands call (spec's
	// path is the pattern, with {edge_id}).
	parent *parentFlag[T, In]
}

// parentFlag is the flag of a nested family's commands that names the
// resource whose collection they call, such as --edge.
type parentFlag[T, In any] struct {
	flag, usage string // without its dashes: "edge"
	// collection is the family of the parent id on c.
	collection func(c *client.Client, parentID string) client.Family[T, In]
	id         *string // the flag's value, once newFamilyCommand registers it
}

// collectionOf returns the family's collection on c, of the parent its
// flag names for a nested family.
func (fam family[T, In]) collectionOf(c *client.Client) client.Family[T, In] {
	if fam.parent != nil {
		return fam.parent.collection(c, *fam.parent.id)
	}
	return client.NewFamily[T, In](c, fam.spec.Path, fam.spec.ListKey)
}

// verbHelp is the help of a command.
type verbHelp struct{ short, long, example string }

// bodyHook is a family's flags that set its body in ways a fieldFlag
// cannot.
type bodyHook[T any] interface {
	register(fl *pflag.FlagSet)
	// apply sets body's fields from the flags given. stored returns the
	// item as stored: nil on create.
	apply(fl *pflag.FlagSet, body map[string]any, stored func() (T, error)) error
}

// resourceKind returns the family's kind, with its path, list key and a
// row that decodes a T.
func (fam family[T, In]) resourceKind() resourceKind {
	kind := fam.kind
	collection := fam.collectionOf(nil) // a path and a list key, without a client to call
	kind.path, kind.listKey = collection.Path(), collection.ListKey()
	if fam.parent != nil {
		kind.pathOf = func() string { return fam.collectionOf(nil).Path() }
	}
	kind.row = rowOf(fam.row)
	return kind
}

// typed returns the family's collection on c, whose bodies are the maps
// --data and the flags make.
func (fam family[T, In]) typed(c *client.Client) client.Family[T, map[string]any] {
	return client.WithBodies[map[string]any](fam.collectionOf(c))
}

// newFamilyCommand returns the command of the family: list, get, those of
// create, update and delete its declaration has, and its other commands,
// with the persistent flags of every command of the API.
func newFamilyCommand[T, In any](fam family[T, In]) *cobra.Command {
	var f resourceFlags
	if fam.parent != nil {
		p := *fam.parent
		p.id = new(string)
		fam.parent = &p
	}
	kind := fam.resourceKind()
	cmd := &cobra.Command{
		Use:   kind.command,
		Short: fam.short,
		Long:  fam.long,
		Args:  cobra.NoArgs,
	}
	f.register(cmd.PersistentFlags())
	if p := fam.parent; p != nil {
		cmd.PersistentFlags().StringVar(p.id, p.flag, "", p.usage)
		_ = cmd.MarkPersistentFlagRequired(p.flag) // the flag was just registered
	}
	cmd.AddCommand(newListCommand(kind, &f), fam.getCommand(&f))
	if fam.spec.Doc.Delete != nil {
		cmd.AddCommand(fam.deleteCommand(&f))
	}
	if fam.spec.Doc.Create != nil {
		cmd.AddCommand(fam.createCommand(&f))
	}
	if fam.spec.Doc.Update != nil {
		cmd.AddCommand(fam.updateCommand(&f))
	}
	if fam.commands != nil {
		cmd.AddCommand(fam.commands(&f)...)
	}
	return cmd
}

func (fam family[T, In]) getCommand(f *resourceFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "get ID",
		Short: "Show one of the account's " + fam.kind.plural,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			a, err := answerOf(func(opts ...client.CallOption) (T, error) {
				return fam.typed(c).Get(cmd.Context(), args[0], opts...)
			})
			if err != nil {
				return err
			}
			return a.print(cmd.OutOrStdout(), fam.fields, f.json)
		},
	}
}

func (fam family[T, In]) createCommand(f *resourceFlags) *cobra.Command {
	b := fam.newBody(false)
	var quiet quietFlag
	cmd := &cobra.Command{
		Use:     "create",
		Short:   fam.create.short,
		Long:    fam.create.long,
		Example: fam.create.example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			body, err := b.build(cmd.Flags(), cmd.InOrStdin(), nil)
			if err != nil {
				return err
			}
			a, err := answerOf(func(opts ...client.CallOption) (T, error) {
				return fam.typed(c).Create(cmd.Context(), body, opts...)
			})
			if err != nil {
				return err
			}
			if fam.created != nil {
				return fam.created(cmd.OutOrStdout(), cmd.ErrOrStderr(), a, f.json, bool(quiet))
			}
			if quiet {
				return a.printID(cmd.OutOrStdout())
			}
			return a.print(cmd.OutOrStdout(), fam.fields, f.json)
		},
	}
	b.register(cmd.Flags())
	quiet.register(cmd.Flags())
	return cmd
}

func (fam family[T, In]) updateCommand(f *resourceFlags) *cobra.Command {
	b := fam.newBody(true)
	cmd := &cobra.Command{
		Use:     "update ID",
		Short:   fam.update.short,
		Long:    fam.update.long,
		Example: fam.update.example,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			stored := func() (T, error) { return fam.typed(c).Get(cmd.Context(), args[0]) }
			body, err := b.build(cmd.Flags(), cmd.InOrStdin(), stored)
			if err != nil {
				return err
			}
			if len(body) == 0 {
				return nothingToUpdate(fam.updateFlags)
			}
			a, err := answerOf(func(opts ...client.CallOption) (T, error) {
				return fam.typed(c).Update(cmd.Context(), args[0], body, opts...)
			})
			if err != nil {
				return err
			}
			return a.print(cmd.OutOrStdout(), fam.fields, f.json)
		},
	}
	b.register(cmd.Flags())
	return cmd
}

func (fam family[T, In]) deleteCommand(f *resourceFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID...",
		Short: "Delete " + fam.kind.plural + ", in turn; stop at the first that cannot be deleted",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			for _, id := range args {
				if err := fam.typed(c).Delete(cmd.Context(), id); err != nil {
					return err
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "deleted", id)
			}
			return nil
		},
	}
}

// newBody returns the flags of a create, or of an update when update is
// true, of the family.
func (fam family[T, In]) newBody(update bool) *familyBody[T] {
	b := &familyBody[T]{fields: newFieldFlags(append(specFlags(fam.spec), fam.moreFlags...), update)}
	if fam.body != nil {
		b.hook = fam.body()
	}
	return b
}

// familyBody is the flags of a create or update: --data, the fields'
// flags and the family's hook.
type familyBody[T any] struct {
	data   bodyFlags
	fields *fieldFlags
	hook   bodyHook[T] // nil for none
}

func (b *familyBody[T]) register(fl *pflag.FlagSet) {
	b.data.register(fl)
	b.fields.register(fl)
	if b.hook != nil {
		b.hook.register(fl)
	}
}

// build returns the body: --data, with the fields of the flags given set
// on it. stored is nil on create.
func (b *familyBody[T]) build(fl *pflag.FlagSet, stdin io.Reader, stored func() (T, error)) (map[string]any, error) {
	body, err := b.data.read(stdin)
	if err != nil {
		return nil, err
	}
	b.fields.apply(fl, body)
	if b.hook != nil {
		if err := b.hook.apply(fl, body, stored); err != nil {
			return nil, err
		}
	}
	return body, nil
}

// answer is a resource the API answered with: its body as the API sent
// it, and as a T unless it did not decode (err).
type answer[T any] struct {
	raw []byte
	v   T
	err error // why raw is not a T: a *json error
}

// answerOf makes a call of the API that asks for a T, keeping its body.
// A body that is not a T is an answer still, for --json to print.
func answerOf[T any](call func(opts ...client.CallOption) (T, error)) (answer[T], error) {
	var a answer[T]
	v, err := call(client.Reply(&a.raw))
	var decodeErr *client.DecodeError
	if errors.As(err, &decodeErr) {
		a.raw, a.err = decodeErr.Body, decodeErr.Err
		return a, nil
	}
	a.v = v
	return a, err
}

// print prints the answer: as it is with asJSON, else as a table of its
// fields.
func (a answer[T]) print(w io.Writer, fields func(T) []resourceField, asJSON bool) error {
	if asJSON {
		return writeRawJSON(w, a.raw)
	}
	if a.err != nil {
		return fmt.Errorf("the API's answer is not the resource it should be: %w", a.err)
	}
	return printFields(w, fields(a.v))
}

// printID prints the id of a resource the API created, for create
// --quiet.
func (a answer[T]) printID(w io.Writer) error {
	return printCreatedID(w, a.raw)
}

// fieldFlag is a flag that sets a field of the body of a create or update
// when it is given.
type fieldFlag struct {
	flag  string // without its dashes: "description"
	field string // the field it sets: "description"
	usage string
	list  bool // repeatable, its values a list
	// boolean makes it a true/false flag, such as --active=false.
	boolean bool
	// updateOnly leaves it out of create, whose body has no such field,
	// and createOnly out of update, for a field immutable after create.
	updateOnly, createOnly bool
	// item turns each value of a repeatable flag into an item of the
	// field's list; nil keeps it as a string.
	item func(value string) any
}

// specFlags returns the flags of the fields of the family spec that have
// a usage, named after their JSON names (destination_ids is
// --destination-ids), with their help and limits as spec declares them.
// A field without a usage is set by a flag of the family's own.
func specFlags(spec resource.Spec) []fieldFlag {
	var flags []fieldFlag
	for _, f := range spec.Fields {
		if f.Usage == "" {
			continue
		}
		flags = append(flags, fieldFlag{
			flag:       strings.ReplaceAll(f.Name, "_", "-"),
			field:      f.Name,
			usage:      f.Help(),
			list:       f.Kind == resource.List,
			boolean:    f.Kind == resource.Bool,
			updateOnly: !f.Create,
			createOnly: !f.Update,
		})
	}
	return flags
}

// fieldFlags are the values of fieldFlag's of a command.
type fieldFlags struct {
	flags   []fieldFlag
	strings []string
	lists   [][]string
	bools   []bool
}

// newFieldFlags returns the values of the flags of a create, or of an
// update when update is true.
func newFieldFlags(flags []fieldFlag, update bool) *fieldFlags {
	var kept []fieldFlag
	for _, f := range flags {
		if update && !f.createOnly || !update && !f.updateOnly {
			kept = append(kept, f)
		}
	}
	n := len(kept)
	return &fieldFlags{flags: kept, strings: make([]string, n), lists: make([][]string, n), bools: make([]bool, n)}
}

func (v *fieldFlags) register(fl *pflag.FlagSet) {
	for i, f := range v.flags {
		switch {
		case f.boolean:
			fl.BoolVar(&v.bools[i], f.flag, false, f.usage)
		case f.list:
			fl.StringSliceVar(&v.lists[i], f.flag, nil, f.usage)
		default:
			fl.StringVar(&v.strings[i], f.flag, "", f.usage)
		}
	}
}

// apply sets on body the fields whose flags were given.
func (v *fieldFlags) apply(fl *pflag.FlagSet, body map[string]any) {
	for i, f := range v.flags {
		switch {
		case !flagGiven(fl, f.flag):
		case f.boolean:
			body[f.field] = v.bools[i]
		case !f.list:
			body[f.field] = v.strings[i]
		case f.item == nil:
			body[f.field] = append([]string{}, v.lists[i]...)
		default:
			items := make([]any, len(v.lists[i]))
			for j, value := range v.lists[i] {
				items[j] = f.item(value)
			}
			body[f.field] = items
		}
	}
}
